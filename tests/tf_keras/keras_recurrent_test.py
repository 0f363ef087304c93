"""Keras's SimpleRNN, LSTM and GRU against eager's (autodiff/layers/recurrent.h)
in a Sequential(Input, RNN(3, ...), Dense(2)) trained with Adam, both ways.

  keras_recurrent_test.py driver=build/tests/tf_keras/keras_recurrent_driver work=DIR

Flavors (TF 2.21): Keras 3 (`keras`) against eager's "keras3" layout
(model/_functional/_operations/N/cell/kernel, ...) and tf_keras against
"keras2" (model/layer_with_weights-0/cell/kernel, ...). Layers: SimpleRNN,
LSTM, GRU (reset_after True and False), each with return_sequences False and
True, and LSTM with go_backwards once; input [3, 4, 5], random weights (the
biases too), loss mean((model(x) - y)^2), Adam with Keras's defaults.

For each flavor and layer:
  TF -> eager: TF takes one Adam step and saves; eager restores into a fresh
    model and Adam, predicts (building the model: restore on creation) as TF
    does after its step, takes the next step, asserts the restore consumed,
    and its weights equal TF's after TF's second step.
  eager -> TF: eager sets the same weights, takes one step and saves; TF
    restores into a built model and optimizer with assert_consumed(), and
    predicts as eager does after its step; the weights equal TF's own first
    step; eager's file has exactly TF's keys and shapes.
Predictions agree to 1e-5 * max(1, max|TF|) (matmuls add in another order,
tanh and sigmoid differ in the last bits); weights after Adam steps to 1e-6
(a step moves each weight by about lr = 1e-3, so that is 1e-3 of a step).
"""

import os
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402

PRED_TOL = 1e-5
WEIGHT_TOL = 1e-6
FLAVORS = [("keras3", keras), ("keras2", tf_keras)]
KINDS = ["simple", "simple-seq", "lstm", "lstm-seq", "lstm-seq-back", "gru", "gru-seq",
         "gru-before", "gru-seq-before"]
SHAPE = (3, 4, 5)  # batch, time, features
WORST = {PRED_TOL: 0.0, WEIGHT_TOL: 0.0}  # the largest scaled difference seen, by tolerance


class Tally:
    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, what, problem):
        if problem is None:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}: {problem}", flush=True)


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")
    print(proc.stdout.strip(), flush=True)


def close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    WORST[tol] = max(WORST[tol], diff / scale)
    return None if diff <= tol * scale else f"max |eager - TF| = {diff:.3g}"


def make(kmod, kind):
    parts = kind.split("-")
    layer = {"simple": kmod.layers.SimpleRNN, "lstm": kmod.layers.LSTM,
             "gru": kmod.layers.GRU}[parts[0]]
    kwargs = {"return_sequences": "seq" in parts, "go_backwards": "back" in parts}
    if parts[0] == "gru":
        kwargs["reset_after"] = "before" not in parts
    model = kmod.Sequential([kmod.Input(SHAPE[1:]), layer(3, **kwargs), kmod.layers.Dense(2)])
    return model, kmod.optimizers.Adam()


def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    variables = model.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def weights(model):
    return [w.numpy() for w in model.weights]


def keys(prefix):
    return sorted((k, tuple(s)) for k, s in tf.train.list_variables(prefix)
                  if k != "_CHECKPOINTABLE_OBJECT_GRAPH")


def case(tally, driver, folder, layout, kmod, kind, x, rng):
    what = f"{layout} ({kmod.__name__}) {kind}"
    os.makedirs(folder)
    model, opt = make(kmod, kind)
    y = rng.randn(*model(x).shape).astype(np.float32)
    w = [rng.randn(*v.shape).astype(np.float32) * 0.5 for v in model.weights]
    for v, value in zip(model.weights, w):
        v.assign(value)
    feeds = os.path.join(folder, "feeds")
    names = ["x", "y"] + [f"w{i}" for i in range(len(w))]
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[x, y] + w)
    step(model, opt, x, y)
    tf_ckpt = tf.train.Checkpoint(model=model, optimizer=opt).save(os.path.join(folder, "tf/ckpt"))
    one_pred = model(x).numpy()
    one_step = weights(model)
    step(model, opt, x, y)
    two_steps = weights(model)

    # TF -> eager.
    out = os.path.join(folder, "eager_resumed")
    try:
        run([driver, "resume", layout, kind, feeds, tf_ckpt, out])
        reader = tf.train.load_checkpoint(out)
        tally.check(f"{what}: TF -> eager prediction",
                    close(reader.get_tensor("pred"), one_pred, PRED_TOL))
        for i, want in enumerate(two_steps):
            tally.check(f"{what}: TF -> eager next Adam step, w{i}",
                        close(reader.get_tensor(f"w{i}"), want, WEIGHT_TOL))
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint and steps", str(e)[:2000])

    # eager -> TF.
    try:
        run([driver, "save", layout, kind, feeds, os.path.join(folder, "eager")])
        fresh, fresh_opt = make(kmod, kind)
        fresh(x)
        fresh_opt.build(fresh.trainable_variables)
        tf.train.Checkpoint(model=fresh, optimizer=fresh_opt).restore(
            os.path.join(folder, "eager/ckpt-1")).assert_consumed()
        eager_pred = tf.train.load_checkpoint(os.path.join(folder, "eager/pred")).get_tensor("pred")
        tally.check(f"{what}: eager -> TF assert_consumed(), TF predicts as eager",
                    close(fresh(x).numpy(), eager_pred, PRED_TOL))
        problems = [f"w{i}: {p}" for i, (got, want) in enumerate(zip(weights(fresh), one_step))
                    if (p := close(got, want, WEIGHT_TOL)) is not None]
        tally.check(f"{what}: eager's step restored by TF equals TF's own",
                    "; ".join(problems) or None)
        ours, theirs = keys(os.path.join(folder, "eager/ckpt-1")), keys(tf_ckpt)
        tally.check(f"{what}: eager's keys and shapes are TF's",
                    None if ours == theirs else f"eager {ours}\nTF {theirs}")
    except (RuntimeError, AssertionError, ValueError) as e:
        tally.check(f"{what}: TF restores eager's checkpoint", str(e)[:2000])


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    driver, work = args["driver"], args["work"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    print(f"TF {tf.__version__}, Keras {keras.__version__}, tf_keras {tf_keras.__version__}",
          flush=True)
    rng = np.random.RandomState(38)
    x = rng.randn(*SHAPE).astype(np.float32)
    tally = Tally()
    for layout, kmod in FLAVORS:
        for kind in KINDS:
            case(tally, driver, os.path.join(work, layout, kind), layout, kmod, kind, x, rng)
    print(f"largest differences: predictions {WORST[PRED_TOL]:.3g} (tolerance {PRED_TOL}), "
          f"weights after Adam steps {WORST[WEIGHT_TOL]:.3g} (tolerance {WEIGHT_TOL})")
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
