"""Keras's SimpleRNN, LSTM and GRU against eager's (autodiff/layers/recurrent.h)
in a Sequential(Input, RNN(3, ...), Dense(2)) trained with Adam, both ways;
and MultiHeadAttention (autodiff/layers/attention.h) alone with Adam.

  keras_recurrent_test.py driver=build/tests/tf_keras/keras_recurrent_driver work=DIR

Flavors (TF 2.21): Keras 3 (`keras`) against eager's "keras3" layout
(model/_functional/_operations/N/cell/kernel, ...) and tf_keras against
"keras2" (model/layer_with_weights-0/cell/kernel, ...). Layers: SimpleRNN,
LSTM, GRU (reset_after True and False), each with return_sequences False and
True, and LSTM with go_backwards once; input [3, 4, 5], random weights (the
biases too), loss mean((model(x) - y)^2), Adam with Keras's defaults.
MultiHeadAttention(num_heads=2, key_dim=3) as self-attention on x ("mha",
checkpointed as tf.train.Checkpoint(layer=..., optimizer=...): edges
layer/_query_dense/_kernel in Keras 3, .../kernel in tf_keras), and with
value_dim=4, output_shape=6 on query x and value [3, 6, 7] ("mha-cross").

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
(a step moves each weight by about lr = 1e-3, so that is 1e-3 of a step),
but MultiHeadAttention's key bias to 5e-3 (see KEY_BIAS_TOL).
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

PRED_TOL = 1e-5
WEIGHT_TOL = 1e-6
# MultiHeadAttention's key bias adds q . b_k to every key's score alike, which
# the softmax ignores: its gradient is 0 in exact arithmetic and rounding noise
# (~1e-9) on both sides, which Adam turns into steps of lr * g / (|g| + eps)
# of either sign (seen: up to 7e-5 apart). Its steps are not comparable, so it
# is held only to what two steps of about lr = 1e-3 each on either side allow:
# enough to tell a restored value (random, ~0.5) from any other.
KEY_BIAS_TOL = 5e-3
FLAVORS = [("keras3", keras), ("keras2", tf_keras)]
KINDS = ["simple", "simple-seq", "lstm", "lstm-seq", "lstm-seq-back", "gru", "gru-seq",
         "gru-before", "gru-seq-before", "mha", "mha-cross"]
SHAPE = (3, 4, 5)  # batch, time, features
# The largest scaled difference seen, by tolerance.
WORST = {PRED_TOL: 0.0, WEIGHT_TOL: 0.0, KEY_BIAS_TOL: 0.0}


def close(got, want, tol):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    WORST[tol] = max(WORST[tol], diff / scale)
    return None if diff <= tol * scale else f"max |eager - TF| = {diff:.3g}"


def make(kmod, kind):
    """(model, optimizer, checkpoint edge, forward(model, x, v))."""
    if kind.startswith("mha"):
        cross = kind == "mha-cross"
        layer = kmod.layers.MultiHeadAttention(num_heads=2, key_dim=3,
                                               value_dim=4 if cross else None,
                                               output_shape=6 if cross else None)
        return layer, kmod.optimizers.Adam(), "layer", lambda m, x, v: m(x, v if cross else x)
    parts = kind.split("-")
    layer = {"simple": kmod.layers.SimpleRNN, "lstm": kmod.layers.LSTM,
             "gru": kmod.layers.GRU}[parts[0]]
    kwargs = {"return_sequences": "seq" in parts, "go_backwards": "back" in parts}
    if parts[0] == "gru":
        kwargs["reset_after"] = "before" not in parts
    model = kmod.Sequential([kmod.Input(SHAPE[1:]), layer(3, **kwargs), kmod.layers.Dense(2)])
    return model, kmod.optimizers.Adam(), "model", lambda m, x, v: m(x)


def step(model, opt, forward, x, v, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(forward(model, x, v) - y))
    variables = model.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def weights(model):
    return [w.numpy() for w in model.weights]


def weight_tol(kind, i):
    """WEIGHT_TOL, but KEY_BIAS_TOL for MultiHeadAttention's key bias (w3)."""
    return KEY_BIAS_TOL if kind.startswith("mha") and i == 3 else WEIGHT_TOL


def keys(prefix):
    return sorted((k, tuple(s)) for k, s in tf.train.list_variables(prefix)
                  if k != "_CHECKPOINTABLE_OBJECT_GRAPH")


def case(tally, driver, folder, layout, kmod, kind, x, v, rng):
    what = f"{layout} ({kmod.__name__}) {kind}"
    os.makedirs(folder)
    model, opt, edge, forward = make(kmod, kind)
    y = rng.randn(*forward(model, x, v).shape).astype(np.float32)
    w = [rng.randn(*v.shape).astype(np.float32) * 0.5 for v in model.weights]
    for var, value in zip(model.weights, w):
        var.assign(value)
    feeds = os.path.join(folder, "feeds")
    names = ["x", "v", "y"] + [f"w{i}" for i in range(len(w))]
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[x, v, y] + w)
    step(model, opt, forward, x, v, y)
    tf_ckpt = tf.train.Checkpoint(**{edge: model, "optimizer": opt}).save(
        os.path.join(folder, "tf/ckpt"))
    one_pred = forward(model, x, v).numpy()
    one_step = weights(model)
    step(model, opt, forward, x, v, y)
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
                        close(reader.get_tensor(f"w{i}"), want, weight_tol(kind, i)))
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint and steps", str(e)[:2000])

    # eager -> TF.
    try:
        run([driver, "save", layout, kind, feeds, os.path.join(folder, "eager")])
        fresh, fresh_opt, _, _ = make(kmod, kind)
        forward(fresh, x, v)
        fresh_opt.build(fresh.trainable_variables)
        tf.train.Checkpoint(**{edge: fresh, "optimizer": fresh_opt}).restore(
            os.path.join(folder, "eager/ckpt-1")).assert_consumed()
        eager_pred = tf.train.load_checkpoint(os.path.join(folder, "eager/pred")).get_tensor("pred")
        tally.check(f"{what}: eager -> TF assert_consumed(), TF predicts as eager",
                    close(forward(fresh, x, v).numpy(), eager_pred, PRED_TOL))
        problems = [f"w{i}: {p}" for i, (got, want) in enumerate(zip(weights(fresh), one_step))
                    if (p := close(got, want, weight_tol(kind, i))) is not None]
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
    v = rng.randn(3, 6, 7).astype(np.float32)  # mha-cross's value
    tally = Tally()
    for layout, kmod in FLAVORS:
        for kind in KINDS:
            case(tally, driver, os.path.join(work, layout, kind), layout, kmod, kind, x, v, rng)
    print(f"largest differences: predictions {WORST[PRED_TOL]:.3g} (tolerance {PRED_TOL}), "
          f"weights after Adam steps {WORST[WEIGHT_TOL]:.3g} (tolerance {WEIGHT_TOL}), "
          f"MultiHeadAttention's key bias {WORST[KEY_BIAS_TOL]:.3g} (tolerance {KEY_BIAS_TOL})")
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
