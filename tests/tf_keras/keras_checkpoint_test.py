"""Seed 000 with today's TF: tf.train.Checkpoint of a Keras model and Adam
against eager's Checkpoint of the same C++ model, in three Keras layouts.

  keras_checkpoint_test.py driver=build/tests/tf_keras/keras_driver work=DIR

Flavors (TF 2.21): Keras 3 (tf.keras, keras.optimizers.Adam) against eager's
"keras3" layout, tf_keras (Keras 2) with its default tf_keras.optimizers.Adam
against "keras2", and tf_keras.optimizers.legacy.Adam (OptimizerV2) against
"keras2_legacy". The model is seed 000's MyModel (one Dense(10)); both sides
start from the same kernel and take Adam steps (Keras defaults) on the mean
sparse softmax cross entropy of one fixed batch.

For each flavor:
  eager -> TF: eager saves after one step; TF restores it into a built model
    and optimizer with assert_consumed(); the restored kernel, bias, Adam
    iterations, m and v equal TF's own one step. Restored into fresh objects
    instead, TF's next step (which builds them and restores on creation)
    passes assert_consumed() and equals TF's own second step (Keras 2 lines;
    Keras 3 restores nothing on creation, for TF's own files too: there the
    test checks that eager's file fails exactly as TF's own). eager's
    checkpoint has exactly the keys, dtypes and shapes TF's own has.
  TF -> eager: TF saves after one step; eager restores it into a fresh model
    and Adam, takes the next step and asserts the restore was consumed; its
    values equal TF's second step.
Then the same for Sequential([Flatten(), Dense(4, relu), Dense(2)]), whose
object graph differs by line (Keras 3: model/_functional/_operations/N with
an InputLayer at 0 and Dense's `_kernel`; tf_keras: layer-N and
layer_with_weights-N): TF writes after one step, eager restores into a fresh
model, predicts as TF does, steps as TF's second step and asserts the restore
consumed; eager writes after one step, TF restores into a built model and
optimizer with assert_consumed(), predicts as eager and holds TF's own first
step; eager's keys are TF's. And eager's model in the other layout fails to
restore TF's file with a message naming the layout the file has.

Adam's arithmetic bit for bit: a float32 variable takes two steps with
given gradients in each flavor; eager's variable, m and v are TF's bits
(Keras 3 and tf_keras 2.11+ compute 1 - beta_1 and 1 - beta_2 in Python
double, then round to float32; OptimizerV2 subtracts in float32).

Float values agree to 1e-6 * max(1, max|TF|) (the matmul may add in another
order); iterations exactly.
"""

import os
import re
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from kerastest import Tally, run  # noqa: E402

TOL = 1e-6
FLAVORS = [  # (eager layout, Keras module, legacy optimizer)
    ("keras3", keras, False),
    ("keras2", tf_keras, False),
    ("keras2_legacy", tf_keras, True),
]


def make(kmod, legacy):
    class MyModel(kmod.Model):
        def __init__(self):
            super().__init__()
            self.dense = kmod.layers.Dense(10)

        def call(self, x):
            return self.dense(x)

    return MyModel(), (kmod.optimizers.legacy.Adam() if legacy else kmod.optimizers.Adam())


def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
    variables = model.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def build(model, opt, x, legacy):
    model(x)
    if legacy:
        opt._create_all_weights(model.trainable_variables)
    else:
        opt.build(model.trainable_variables)


def state(model, opt, legacy):
    """kernel, bias, iterations, m and v of both, as numpy."""
    kernel, bias = model.dense.kernel, model.dense.bias
    out = {"kernel": kernel.numpy(), "bias": bias.numpy(),
           "iterations": np.int64(opt.iterations.numpy())}
    for i, (name, var) in enumerate([("kernel", kernel), ("bias", bias)]):
        if legacy:
            m, v = opt.get_slot(var, "m"), opt.get_slot(var, "v")
        else:  # built from [kernel, bias]: list position i
            m, v = opt._momentums[i], opt._velocities[i]
        out["m/" + name], out["v/" + name] = np.asarray(m.numpy()), np.asarray(v.numpy())
    return out


def compare(tally, what, got, want):
    for key in sorted(want):
        g, w = np.asarray(got[key]), np.asarray(want[key])
        if g.shape != w.shape:
            problem = f"shape {g.shape}, TF {w.shape}"
        elif w.dtype.kind == "i":
            problem = None if np.array_equal(g, w) else f"{g} != TF's {w}"
        else:
            scale = max(1.0, float(np.max(np.abs(w))))
            diff = float(np.max(np.abs(g.astype(np.float64) - w)))
            problem = None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g}"
        tally.check(f"{what}: {key}", problem)


def keys(prefix):
    return sorted((k, tuple(s), tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()[k].name)
                  for k, s in tf.train.list_variables(prefix) if k != "_CHECKPOINTABLE_OBJECT_GRAPH")


def flavor(tally, driver, work, layout, kmod, legacy, feeds, x, y, kernel0):
    folder = os.path.join(work, layout)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    what = f"{layout} ({kmod.__name__}{' legacy' if legacy else ''} Adam)"
    # TF's own steps from kernel0.
    model, opt = make(kmod, legacy)
    model(x)
    model.dense.kernel.assign(kernel0)
    step(model, opt, x, y)
    tf_ckpt = tf.train.Checkpoint(model=model, optimizer=opt).save(os.path.join(folder, "tf/ckpt"))
    one_step = state(model, opt, legacy)
    step(model, opt, x, y)
    two_steps = state(model, opt, legacy)

    # eager -> TF.
    run([driver, "save", layout, feeds, os.path.join(folder, "eager")])
    eager_ckpt = os.path.join(folder, "eager/ckpt-1")
    model, opt = make(kmod, legacy)
    build(model, opt, x, legacy)
    try:
        tf.train.Checkpoint(model=model, optimizer=opt).restore(eager_ckpt).assert_consumed()
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", None)
        compare(tally, f"{what}: eager's step restored by TF", state(model, opt, legacy), one_step)
    except (AssertionError, ValueError) as e:  # ValueError: a value of another shape
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", str(e)[:2000])
    # The same into fresh, unbuilt objects: TF restores on creation during
    # its next step, then asserts; that step continues eager's first.
    # Keras 3 does not restore a layer's variables on creation at all (its
    # layers make a plain tf.Variable in keras/src/backend/tensorflow/core.py,
    # Variable._initialize, which no deferred restoration is asked about):
    # TF's own Keras 3 checkpoint fails the same way ("Object ... _kernel ...
    # not assigned a value from checkpoint"). There eager's file must fail
    # exactly as TF's own does.
    outcomes = {}
    for source, path in [("eager's", eager_ckpt), ("TF's own", tf_ckpt)]:
        model, opt = make(kmod, legacy)
        status = tf.train.Checkpoint(model=model, optimizer=opt).restore(path)
        step(model, opt, x, y)
        try:
            status.assert_consumed()
            outcomes[source] = None
        except (AssertionError, ValueError) as e:
            # The unresolved object's key names it; the full_name differs.
            unresolved = re.findall(r'checkpoint_key: "([^"]*)"', str(e))
            outcomes[source] = f"{type(e).__name__} on {unresolved or str(e)[:200]}"
        if source == "eager's":
            got = state(model, opt, legacy)
    if kmod is keras:
        mine, theirs = outcomes["eager's"], outcomes["TF's own"]
        print(f"{what}: restore on creation of TF's own checkpoint: {theirs} "
              "(Keras 3 does not restore on creation)", flush=True)
        tally.check(f"{what}: restore on creation fails for eager's file as for TF's own",
                    None if mine == theirs and mine else f"eager's: {mine}; TF's own: {theirs}")
    else:
        tally.check(f"{what}: TF restores eager's checkpoint on creation, assert_consumed()",
                    outcomes["eager's"])
        if outcomes["eager's"] is None:
            compare(tally, f"{what}: TF's step after eager's", got, two_steps)
    tally.check(f"{what}: eager's keys are TF's",
                None if keys(eager_ckpt) == keys(tf_ckpt) else
                f"eager {keys(eager_ckpt)}\nTF {keys(tf_ckpt)}")

    # TF -> eager.
    out = os.path.join(folder, "eager_resumed")
    try:
        run([driver, "resume", layout, feeds, tf_ckpt, out])
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint and steps", str(e))
        return
    got = {k: tf.train.load_checkpoint(out).get_tensor(k) for k in two_steps}
    compare(tally, f"{what}: eager's next step from TF's checkpoint", got, two_steps)


def seq_make(kmod, legacy):
    model = kmod.Sequential([kmod.layers.Flatten(), kmod.layers.Dense(4, activation="relu"),
                             kmod.layers.Dense(2)])
    return model, (kmod.optimizers.legacy.Adam() if legacy else kmod.optimizers.Adam())


def seq_state(model):
    d0, d1 = model.layers[1], model.layers[2]
    return {"k0": d0.kernel.numpy(), "b0": d0.bias.numpy(),
            "k1": d1.kernel.numpy(), "b1": d1.bias.numpy()}


def seq_flavor(tally, driver, work, layout, kmod, legacy, feeds, sx, sy, k0, k1):
    folder = os.path.join(work, "seq_" + layout)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    what = f"Sequential {layout} ({kmod.__name__}{' legacy' if legacy else ''} Adam)"
    model, opt = seq_make(kmod, legacy)
    model(sx)
    model.layers[1].kernel.assign(k0)
    model.layers[2].kernel.assign(k1)
    step(model, opt, sx, sy)
    tf_ckpt = tf.train.Checkpoint(model=model, optimizer=opt).save(os.path.join(folder, "tf/ckpt"))
    one_pred = model(sx).numpy()
    one_step = seq_state(model)
    step(model, opt, sx, sy)
    two_steps = seq_state(model)

    # TF -> eager.
    out = os.path.join(folder, "eager_resumed")
    try:
        run([driver, "seq-resume", layout, feeds, tf_ckpt, out])
        got = {k: tf.train.load_checkpoint(out).get_tensor(k) for k in ["pred"] + list(two_steps)}
        compare(tally, f"{what}: eager's prediction from TF's checkpoint", got, {"pred": one_pred})
        compare(tally, f"{what}: eager's next step from TF's checkpoint",
                {k: got[k] for k in two_steps}, two_steps)
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint and steps", str(e))
    # The other layout's model names the file's.
    other = "keras2" if layout == "keras3" else "keras3"
    proc = subprocess.run([driver, "seq-resume", other, feeds, tf_ckpt, out + "_other"],
                          capture_output=True, text=True)
    expected = "_functional/_operations" if layout == "keras3" else "layer_with_weights-0"
    tally.check(f"{what}: a {other} model refuses TF's file naming its layout",
                None if proc.returncode != 0 and expected in proc.stderr else
                f"exit {proc.returncode}, stderr {proc.stderr.strip()[:600]!r}")

    # eager -> TF.
    try:
        run([driver, "seq-save", layout, feeds, os.path.join(folder, "eager")])
    except RuntimeError as e:
        tally.check(f"{what}: eager writes", str(e))
        return
    eager_ckpt = os.path.join(folder, "eager/ckpt-1")
    model, opt = seq_make(kmod, legacy)
    build(model, opt, sx, legacy)
    try:
        tf.train.Checkpoint(model=model, optimizer=opt).restore(eager_ckpt).assert_consumed()
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", None)
        compare(tally, f"{what}: eager's step restored by TF", seq_state(model), one_step)
        eager_pred = tf.train.load_checkpoint(os.path.join(folder, "eager/pred")).get_tensor("pred")
        compare(tally, f"{what}: TF predicts as eager", {"pred": model(sx).numpy()},
                {"pred": eager_pred})
    except (AssertionError, ValueError) as e:
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", str(e)[:2000])
    tally.check(f"{what}: eager's keys are TF's",
                None if keys(eager_ckpt) == keys(tf_ckpt) else
                f"eager {keys(eager_ckpt)}\nTF {keys(tf_ckpt)}")


def adam_bits(tally, driver, work, layout, kmod, legacy, feeds, w0, g1, g2):
    w = tf.Variable(w0)
    opt = kmod.optimizers.legacy.Adam() if legacy else kmod.optimizers.Adam()
    for g in (g1, g2):
        opt.apply_gradients([(tf.constant(g), w)])
    if legacy:
        m, v = opt.get_slot(w, "m"), opt.get_slot(w, "v")
    else:
        m, v = opt._momentums[0], opt._velocities[0]
    want = {"w": w.numpy(), "m": m.numpy(), "v": v.numpy()}
    out = os.path.join(work, "adam_bits_" + layout)
    try:
        run([driver, "adam-bits", layout, feeds, out])
    except RuntimeError as e:
        tally.check(f"Adam bits {layout}", str(e))
        return
    reader = tf.train.load_checkpoint(out)
    for key, value in want.items():
        got = reader.get_tensor(key)
        differ = int(np.sum(got.view(np.uint32) != value.view(np.uint32)))
        tally.check(f"Adam bits {layout} ({kmod.__name__}{' legacy' if legacy else ''}): {key}",
                    None if differ == 0 else
                    f"{differ} of {value.size} differ, e.g. eager {got.flat[:3]} TF "
                    f"{value.flat[:3]} (ratio {(got.astype(np.float64) / value).flat[:3]})")


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    driver, work = args["driver"], args["work"]
    os.makedirs(work, exist_ok=True)
    rng = np.random.RandomState(0)
    x = rng.randn(4, 3).astype(np.float32)
    y = np.array([1, 2, 3, 4], np.int32)
    kernel0 = (rng.rand(3, 10).astype(np.float32) - 0.5)
    sx = rng.randn(5, 2, 3).astype(np.float32)
    sy = np.array([0, 1, 1, 0, 1], np.int32)
    k0 = (rng.rand(6, 4).astype(np.float32) - 0.5)
    k1 = (rng.rand(4, 2).astype(np.float32) - 0.5)
    w0 = rng.randn(64).astype(np.float32)
    g1 = rng.randn(64).astype(np.float32)
    g2 = rng.randn(64).astype(np.float32)
    feeds = os.path.join(work, "feeds")
    names = ["kernel0", "x", "y", "sx", "sy", "k0", "k1", "w0", "g1", "g2"]
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[kernel0, x, y, sx, sy, k0, k1, w0, g1, g2])
    print(f"TF {tf.__version__}, Keras {keras.__version__}, tf_keras {tf_keras.__version__}",
          flush=True)
    tally = Tally()
    for layout, kmod, legacy in FLAVORS:
        flavor(tally, driver, work, layout, kmod, legacy, feeds, x, y, kernel0)
    for layout, kmod, legacy in FLAVORS:
        seq_flavor(tally, driver, work, layout, kmod, legacy, feeds, sx, sy, k0, k1)
    for layout, kmod, legacy in FLAVORS:
        adam_bits(tally, driver, work, layout, kmod, legacy, feeds, w0, g1, g2)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
