"""Keras's normalization, dropout and embedding layers against eager's
(autodiff/layers/), through tf.train.Checkpoint(layer=layer), both ways.

  keras_layers_test.py driver=build/tests/tf_keras/keras_layers_driver work=DIR

Flavors (TF 2.21): Keras 3 (`keras`) against eager's "keras3" layout and
tf_keras (Keras 2) against "keras2". Layers: BatchNormalization (Keras
defaults), LayerNormalization, Embedding(7, 5), Dropout(0.3), each on a fixed
input (BatchNormalization also on a rank-4 one in Keras 3), and a tf_keras
Sequential([Dense(4), BatchNormalization(), Dropout(0.3), Dense(2)]) whose
training output is not compared (the masks differ) but whose moving
statistics are. Then the weightless shape layers: Activation("softmax"),
Reshape((3, -1)), Permute((2, 1)), RepeatVector(3), ZeroPadding2D(((1, 2),
(0, 3))) and Cropping2D(((1, 0), (2, 1))), outputs compared the same way.

For each flavor and layer:
  TF -> eager: TF builds the layer, sets weights (random, variances
    positive), saves; eager restores into a fresh layer (built by its first
    call, restore on creation), asserts consumed, and its inference output,
    training output and (BatchNormalization) moving statistics after that one
    training call equal TF's. Dropout's training masks come from different
    generators (TF's stateless Philox keyed from Keras's seed state, eager's
    own): there each output is 0 or TF's x * (1 / (1 - rate)) exactly, and
    the share of zeros is within 5 sigma of the rate.
  eager -> TF: eager builds the layer, sets the same weights, saves; TF
    restores into a built layer with assert_consumed(), and the variables
    equal the weights set (exactly).
Float values agree to 1e-5 * max(1, max|TF|) (reductions add in another
order; rsqrt differs in the last bits).

Known difference, not judged: tf_keras's BatchNormalization on rank-4 input
takes TF's fused kernel, which updates moving_variance with the unbiased
(n / (n - 1)) batch variance; eager, as Keras 3, uses the biased one.
"""

import os
import shutil
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from kerastest import Tally, run  # noqa: E402

TOL = 1e-5
FLAVORS = [("keras3", keras), ("keras2", tf_keras)]
RATE = 0.3


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    return None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g}"


def make(kmod, kind):
    L = kmod.layers
    return {"bn": lambda: L.BatchNormalization(), "ln": lambda: L.LayerNormalization(),
            "embedding": lambda: L.Embedding(7, 5), "dropout": lambda: L.Dropout(RATE),
            "seq": lambda: kmod.Sequential([L.Dense(4), L.BatchNormalization(), L.Dropout(RATE),
                                            L.Dense(2)]),
            "softmax": lambda: L.Activation("softmax"), "reshape": lambda: L.Reshape((3, -1)),
            "permute": lambda: L.Permute((2, 1)), "repeat": lambda: L.RepeatVector(3),
            "zeropad": lambda: L.ZeroPadding2D(((1, 2), (0, 3))),
            "crop": lambda: L.Cropping2D(((1, 0), (2, 1)))}[kind]()


def weights(layer, rng):
    """Random weights for the built layer, in layer.weights order (eager's
    Variables() order); variances positive."""
    out = []
    for w in layer.weights:
        value = rng.randn(*w.shape).astype(np.float32)
        if "moving_variance" in w.name:
            value = np.abs(value) + 0.5
        out.append(value)
    return out


def case(tally, driver, folder, layout, kmod, kind, x, rng):
    what = f"{layout} ({kmod.__name__}) {kind} {list(x.shape)}"
    os.makedirs(folder)
    feeds = os.path.join(folder, "feeds")
    layer = make(kmod, kind)
    layer(x)
    w = weights(layer, rng)
    for v, value in zip(layer.weights, w):
        v.assign(value)
    names = ["x"] + [f"w{i}" for i in range(len(w))]
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[x] + w)
    tf_ckpt = tf.train.Checkpoint(layer=layer).save(os.path.join(folder, "tf/ckpt"))
    want = {"infer": layer(x, training=False).numpy(), "train": layer(x, training=True).numpy()}
    if kind in ("bn", "seq"):
        bn = layer if kind == "bn" else layer.layers[1]
        want["moving_mean"] = bn.moving_mean.numpy()
        want["moving_variance"] = bn.moving_variance.numpy()

    # TF -> eager.
    out = os.path.join(folder, "eager_out")
    try:
        run([driver, "restore", layout, kind, feeds, tf_ckpt, out])
        reader = tf.train.load_checkpoint(out)
        got = {k: reader.get_tensor(k) for k in want}
        for key in sorted(want):
            if kind in ("dropout", "seq") and key == "train":
                continue
            tally.check(f"{what}: TF -> eager {key}", close(got[key], want[key]))
        if kind == "dropout":
            kept = got["train"] != 0
            scaled = x * np.float32(1.0 / (1.0 - RATE))
            ok = np.array_equal(got["train"][kept], scaled[kept])
            n, zeros = x.size, int(np.sum(~kept))
            sigma = (n * RATE * (1 - RATE)) ** 0.5
            tally.check(f"{what}: TF -> eager kept values are x / (1 - rate)",
                        None if ok else "kept values differ from x * (1 / (1 - rate))")
            tally.check(f"{what}: TF -> eager share of zeros {zeros}/{n}",
                        None if abs(zeros - n * RATE) <= 5 * sigma else f"expected ~{n * RATE:.0f}")
            tf_zeros = int(np.sum(want["train"] == 0))
            print(f"{what}: TF's own mask zeroed {tf_zeros}/{n}", flush=True)
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint", str(e)[:2000])

    # eager -> TF.
    try:
        run([driver, "save", layout, kind, feeds, os.path.join(folder, "eager")])
        fresh = make(kmod, kind)
        fresh(x)
        tf.train.Checkpoint(layer=fresh).restore(
            os.path.join(folder, "eager/ckpt-1")).assert_consumed()
        problems = [f"{v.name}: {close(v.numpy(), value)}"
                    for v, value in zip(fresh.weights, w) if not np.array_equal(v.numpy(), value)]
        tally.check(f"{what}: eager -> TF assert_consumed() and the weights",
                    "; ".join(problems) or None)
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
    inputs = {
        "bn": rng.randn(4, 3, 5).astype(np.float32) * 2 + 1,
        "ln": rng.randn(4, 3, 5).astype(np.float32) * 2 + 1,
        "embedding": rng.randint(0, 7, size=(3, 4)).astype(np.int32),
        "dropout": rng.randn(40, 25).astype(np.float32),
    }
    tally = Tally()
    for layout, kmod in FLAVORS:
        for kind, x in inputs.items():
            case(tally, driver, os.path.join(work, layout, kind), layout, kmod, kind, x, rng)
    x4 = rng.randn(2, 3, 3, 5).astype(np.float32)
    case(tally, driver, os.path.join(work, "keras3", "bn_rank4"), "keras3", keras, "bn", x4, rng)
    # A tf_keras Sequential (layer_with_weights-N edges) of Dense, BN, Dropout,
    # Dense: inference output, and BN's moving statistics after a training
    # call (upstream of the dropout). Keras 3's Sequential layout
    # (_functional/_operations/N) is not eager's yet (issue 38).
    xs = rng.randn(6, 5).astype(np.float32)
    case(tally, driver, os.path.join(work, "keras2", "seq"), "keras2", tf_keras, "seq", xs, rng)
    # The weightless shape layers (autodiff/layers/reshaping.h), both lines.
    shaped = {"softmax": (3, 4), "reshape": (2, 12), "permute": (2, 3, 4), "repeat": (3, 4),
              "zeropad": (2, 4, 5, 3), "crop": (2, 4, 5, 3)}
    for layout, kmod in FLAVORS:
        for kind, shape in shaped.items():
            x = rng.randn(*shape).astype(np.float32)
            case(tally, driver, os.path.join(work, layout, kind), layout, kmod, kind, x, rng)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
