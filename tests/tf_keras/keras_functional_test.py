"""A functional Keras model against eager's functional API
(autodiff/functional.h), through tf.train.Checkpoint(model=, optimizer=),
both ways, in Keras 3 and tf_keras.

  keras_functional_test.py driver=build/tests/tf_keras/keras_functional_driver work=DIR

The model (keras_functional_driver.cc builds the same in C++): inputs a [3]
and b [2]; pa = Dense(3)(a), pb = Dense(3)(b); one Dense(4) "shared" called
on both; Concatenate()([shared(pa), shared(pb)]); outputs o1 = Dense(2) of
the concatenation and o2 = Dense(1)(shared(pb)). Loss mean((o1 - ya)^2) +
mean((o2 - yb)^2), Adam(0.01) (keras.optimizers.Adam / tf_keras's), one
step by tf.GradientTape and apply_gradients.

For each line (Keras 3 against eager's "keras3" layout, tf_keras against
"keras2"):
  TF -> eager: TF takes one step and saves; eager builds the model by the
    functional API, restores, and its inference outputs equal TF's; it takes
    one step, asserts the restore consumed, and its weights equal TF's after
    TF's next step.
  eager -> TF: eager starts from TF's initial weights, takes one step and
    saves; TF restores into a fresh model and built Adam with
    assert_consumed(), and its outputs equal eager's, and TF's own after its
    one step from the same start.
  Merge layers: a model of two Dense layers whose outputs feed Add,
    Subtract, Multiply, Average, Maximum and Minimum (six outputs): eager
    restores TF's checkpoint (assert consumed); outputs and the gradients of
    sum_i mean(y_i^2) for the Dense variables equal TF's.
  Nested models: x -> a functional model (Dense(4, relu)) -> a Sequential
    (Dense(2)) -> Dense(1): eager restores TF's checkpoint (assert
    consumed) and its output equals TF's.
  The wrong layout: TF's file restored in the other line's layout fails
    with a message naming the structure the file holds.
Values agree to 1e-5 * max(1, max|TF|).
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
from kerastest import Tally, run  # noqa: E402

TOL = 1e-5
WORST = [0.0]  # the largest |eager - TF| / max(1, max|TF|) seen
FLAVORS = [("keras3", keras), ("keras2", tf_keras)]


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    WORST[0] = max(WORST[0], diff / scale)
    return None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g}"


def build(kmod):
    L = kmod.layers
    a = kmod.Input((3,), name="a")
    b = kmod.Input((2,), name="b")
    shared = L.Dense(4, name="shared")
    sb = shared(L.Dense(3, name="pb")(b))
    c = L.Concatenate(name="concatenate")([shared(L.Dense(3, name="pa")(a)), sb])
    return kmod.Model([a, b], [L.Dense(2, name="o1")(c), L.Dense(1, name="o2")(sb)])


def step(model, optimizer, f):
    with tf.GradientTape() as tape:
        y0, y1 = model([f["xa"], f["xb"]], training=True)
        loss = tf.reduce_mean(tf.square(y0 - f["ya"])) + tf.reduce_mean(tf.square(y1 - f["yb"]))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


def case(tally, driver, folder, layout, kmod, rng):
    what = f"{layout} ({kmod.__name__})"
    os.makedirs(folder)
    f = {"xa": rng.randn(5, 3), "xb": rng.randn(5, 2), "ya": rng.randn(5, 2), "yb": rng.randn(5, 1)}
    f = {k: v.astype(np.float32) for k, v in f.items()}
    model = build(kmod)
    optimizer = kmod.optimizers.Adam(0.01)
    w_init = [v.numpy() for v in model.trainable_variables]
    names = sorted(f) + [f"w{i}" for i in range(len(w_init))]
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[f[k] for k in sorted(f)] + w_init)
    step(model, optimizer, f)
    tf_after_one = [v.numpy() for v in model.trainable_variables]
    pred_after_one = [y.numpy() for y in model([f["xa"], f["xb"]], training=False)]
    tf_ckpt = tf.train.Checkpoint(model=model, optimizer=optimizer).save(
        os.path.join(folder, "tf/ckpt"))
    step(model, optimizer, f)
    tf_after_two = [v.numpy() for v in model.trainable_variables]

    # TF -> eager.
    out = os.path.join(folder, "eager_out")
    try:
        run([driver, "restore", layout, feeds, tf_ckpt, out])
        reader = tf.train.load_checkpoint(out)
        for i in range(2):
            tally.check(f"{what}: TF -> eager output {i}",
                        close(reader.get_tensor(f"y{i}"), pred_after_one[i]))
        diffs = [close(reader.get_tensor(f"w{i}"), w) for i, w in enumerate(tf_after_two)]
        problems = [f"w{i} ({model.trainable_variables[i].name}): {d}"
                    for i, d in enumerate(diffs) if d is not None]
        tally.check(f"{what}: TF -> eager, the next Adam step's weights",
                    "; ".join(problems) or None)
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint", str(e)[:2000])

    # TF's file restored in the other line's layout: refused, naming the
    # layout the file holds.
    other = "keras2" if layout == "keras3" else "keras3"
    holds = "a Keras 3 functional model" if layout == "keras3" else "a tf_keras (Keras 2) model"
    proc = subprocess.run([driver, "restore", other, feeds, tf_ckpt, out + "_other"],
                          capture_output=True, text=True)
    tally.check(f"{what}: restored as {other}, the error names the file's layout",
                None if proc.returncode == 1 and holds in proc.stderr
                else f"exit {proc.returncode}: {proc.stderr.strip()[:500]}")

    # eager -> TF.
    try:
        run([driver, "save", layout, feeds, os.path.join(folder, "eager")])
        fresh = build(kmod)
        fresh_opt = kmod.optimizers.Adam(0.01)
        fresh_opt.build(fresh.trainable_variables)
        tf.train.Checkpoint(model=fresh, optimizer=fresh_opt).restore(
            os.path.join(folder, "eager/ckpt-1")).assert_consumed()
        reader = tf.train.load_checkpoint(os.path.join(folder, "eager/pred"))
        pred = [y.numpy() for y in fresh([f["xa"], f["xb"]], training=False)]
        for i in range(2):
            tally.check(f"{what}: eager -> TF output {i} equals eager's",
                        close(pred[i], reader.get_tensor(f"y{i}")))
            tally.check(f"{what}: eager -> TF output {i} equals TF's after its own step",
                        close(pred[i], pred_after_one[i]))
        problems = [f"{v.name}: {close(v.numpy(), w)}"
                    for v, w in zip(fresh.trainable_variables, tf_after_one)
                    if close(v.numpy(), w) is not None]
        tally.check(f"{what}: eager -> TF, the weights after one step", "; ".join(problems) or None)
    except (RuntimeError, AssertionError, ValueError) as e:
        tally.check(f"{what}: TF restores eager's checkpoint with assert_consumed()",
                    str(e)[:2000])


def merge_case(tally, driver, folder, layout, kmod, rng):
    """Keras's merge layers: TF's outputs and gradients, eager's from TF's
    checkpoint of the same model."""
    what = f"{layout} ({kmod.__name__}) merge layers"
    os.makedirs(folder)
    L = kmod.layers
    a = kmod.Input((3,), name="a")
    c = kmod.Input((3,), name="c")
    both = [L.Dense(4, name="da")(a), L.Dense(4, name="dc")(c)]
    merges = [L.Add(), L.Subtract(), L.Multiply(), L.Average(), L.Maximum(), L.Minimum()]
    model = kmod.Model([a, c], [m(both) for m in merges])
    f = {"xa": rng.randn(5, 3).astype(np.float32), "xc": rng.randn(5, 3).astype(np.float32)}
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=["xa", "xc"], shape_and_slices=["", ""],
                      tensors=[f["xa"], f["xc"]])
    tf_ckpt = tf.train.Checkpoint(model=model).save(os.path.join(folder, "tf/ckpt"))
    with tf.GradientTape() as tape:
        ys = model([f["xa"], f["xc"]])
        loss = tf.add_n([tf.reduce_mean(tf.square(y)) for y in ys])
    grads = tape.gradient(loss, model.trainable_variables)
    out = os.path.join(folder, "eager_out")
    try:
        run([driver, "merge", layout, feeds, tf_ckpt, out])
        reader = tf.train.load_checkpoint(out)
        for i, (m, y) in enumerate(zip(merges, ys)):
            tally.check(f"{what}: {type(m).__name__}", close(reader.get_tensor(f"y{i}"), y))
        problems = [f"{v.name}: {close(reader.get_tensor(f'g{i}'), g)}"
                    for i, (v, g) in enumerate(zip(model.trainable_variables, grads))
                    if close(reader.get_tensor(f"g{i}"), g) is not None]
        tally.check(f"{what}: gradients", "; ".join(problems) or None)
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint", str(e)[:2000])


def nested_case(tally, driver, folder, layout, kmod, rng):
    """A functional model holding a functional model and a Sequential."""
    what = f"{layout} ({kmod.__name__}) nested models"
    os.makedirs(folder)
    L = kmod.layers
    inner_in = kmod.Input((3,), name="inner_in")
    inner = kmod.Model(inner_in, L.Dense(4, activation="relu", name="inner_dense")(inner_in),
                       name="inner")
    seq = kmod.Sequential([L.Dense(2, name="seq_dense")], name="seq")
    x = kmod.Input((3,), name="x")
    model = kmod.Model(x, L.Dense(1, name="head")(seq(inner(x))), name="outer")
    xa = rng.randn(5, 3).astype(np.float32)
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=["xa"], shape_and_slices=[""], tensors=[xa])
    tf_ckpt = tf.train.Checkpoint(model=model).save(os.path.join(folder, "tf/ckpt"))
    out = os.path.join(folder, "eager_out")
    try:
        run([driver, "nested", layout, feeds, tf_ckpt, out])
        got = tf.train.load_checkpoint(out).get_tensor("y0")
        tally.check(f"{what}: output", close(got, model(xa)))
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint", str(e)[:2000])


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    driver, work = args["driver"], args["work"]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    print(f"TF {tf.__version__}, Keras {keras.__version__}, tf_keras {tf_keras.__version__}",
          flush=True)
    rng = np.random.RandomState(38)
    tally = Tally()
    for layout, kmod in FLAVORS:
        case(tally, driver, os.path.join(work, layout), layout, kmod, rng)
        merge_case(tally, driver, os.path.join(work, layout, "merge"), layout, kmod, rng)
        nested_case(tally, driver, os.path.join(work, layout, "nested"), layout, kmod, rng)
    print(f"largest |eager - TF| / max(1, max|TF|): {WORST[0]:.3g}", flush=True)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
