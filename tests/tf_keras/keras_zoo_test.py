"""A zoo of Keras 3 models trained in Keras and continued in eager: the
layers together, as a user combines them.

  keras_zoo_test.py driver=build/tests/tf_keras/keras_zoo_driver work=DIR

Models (TF 2.21, Keras 3, Adam with Keras's defaults, loss mean((pred - y)^2)):
  cnn:         Sequential(Input((8, 8, 1)), Conv2D(4, 3, padding="same"),
               BatchNormalization(), Activation("relu"), MaxPooling2D(),
               Dropout(0.3, seed=5), Flatten(), Dense(3))
  lstm:        Sequential(Input((6,), int32), Embedding(10, 4, mask_zero=True),
               LSTM(3), Dense(2)) on ids padded with zeros
  two-input:   Model([a (5, 3), b (4,)], Dense(2)(Concatenate()([GRU(3)(a),
               Dense(3, relu)(b)])))
  transformer: Model(x (5, 8), Dense(2)(LayerNormalization()(Add()([x,
               MultiHeadAttention(2, 4)(x, x)]))))
Keras takes one training step (training=True: Dropout drops with its seed
state [5, 0], BatchNormalization updates its moving statistics) and saves
tf.train.Checkpoint(model=..., optimizer=...); it then predicts (inference)
and takes a second step. eager builds the same model, restores the file,
predicts, takes the next step (its Dropout at step 1, Keras's seed state
[5, 1]) and saves. Its prediction equals Keras's, and every value in its
checkpoint (weights, moving statistics, Adam's slots and iterations) equals
Keras's after its second step, by key, within 1e-5 * max(1, max|TF|) (but
see NOISE_TOL for two biases without a gradient); the two files hold the
same keys and shapes.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
from kerastest import Tally, run, start  # noqa: E402

TOL = 1e-5
# A bias whose gradient is 0 in exact arithmetic (a Conv2D bias under
# BatchNormalization in training, which subtracts the batch mean; the
# attention's key bias, which adds the same q . b_k to every score of a row)
# gets rounding noise (~1e-9) on both sides, which Adam turns into steps of
# lr * g / (|g| + eps) of either sign: its steps are not comparable. It is
# held to what two steps of about lr = 1e-3 allow, which still tells a
# restored value from another.
NOISE_TOL = 5e-3
KINDS = ["cnn", "lstm", "two-input", "transformer"]
# Ids repeat within a sequence and across the batch: Keras 3's Adam takes the
# Embedding's sparse gradient (IndexedSlices) row by row, so a row looked up k
# times gets v += (1 - beta_2) * the sum of its k squared rows, not the square
# of their sum (seen before eager kept the slices: v 3.3e-8 in eager against
# 2.2e-8 in Keras for an id read twice). eager's Minimize keeps the slices.
IDS = np.array([[3, 5, 3, 2, 0, 0], [4, 7, 1, 4, 6, 0], [8, 8, 3, 0, 0, 0]], np.int32)
WORST = [0.0]
L = keras.layers


def close(got, want, tol=TOL):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    diff = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    if tol == TOL:
        WORST[0] = max(WORST[0], diff / scale)
    return None if diff <= tol * scale else f"max |eager - TF| = {diff:.3g}"


def make(kind, rng):
    """(model, inputs as a list)."""
    if kind == "cnn":
        model = keras.Sequential([keras.Input((8, 8, 1)), L.Conv2D(4, 3, padding="same"),
                                  L.BatchNormalization(), L.Activation("relu"),
                                  L.MaxPooling2D(), L.Dropout(0.3, seed=5), L.Flatten(),
                                  L.Dense(3)])
        return model, [rng.randn(3, 8, 8, 1).astype(np.float32)]
    if kind == "lstm":
        model = keras.Sequential([keras.Input((6,), dtype="int32"),
                                  L.Embedding(10, 4, mask_zero=True), L.LSTM(3), L.Dense(2)])
        return model, [IDS]
    if kind == "two-input":
        a, b = keras.Input((5, 3)), keras.Input((4,))
        joined = L.Concatenate()([L.GRU(3)(a), L.Dense(3, activation="relu")(b)])
        model = keras.Model([a, b], L.Dense(2)(joined))
        return model, [rng.randn(3, 5, 3).astype(np.float32), rng.randn(3, 4).astype(np.float32)]
    x = keras.Input((5, 8))
    h = L.LayerNormalization()(L.Add()([x, L.MultiHeadAttention(2, 4)(x, x)]))
    model = keras.Model(x, L.Dense(2)(h))
    return model, [rng.randn(3, 5, 8).astype(np.float32)]


def noise_keys(kind, model):
    """The checkpoint keys of the biases without a gradient (see NOISE_TOL):
    TF saves a variable the model and Adam share under Adam's path."""
    variables = model.trainable_variables
    if kind == "cnn":
        noisy = [model.layers[0].bias]
    elif kind == "transformer":
        mha = [op for op in model.operations if isinstance(op, L.MultiHeadAttention)][0]
        noisy = [mha._key_dense.bias]
    else:
        return set()
    return {f"optimizer/_trainable_variables/{i}/.ATTRIBUTES/VARIABLE_VALUE"
            for i, v in enumerate(variables) if any(v is n for n in noisy)}


def step(model, opt, inputs, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(inputs, training=True) - y))
    variables = model.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def values(prefix):
    reader = tf.train.load_checkpoint(prefix)
    return {k: reader.get_tensor(k) for k, _ in tf.train.list_variables(prefix)
            if k not in ("_CHECKPOINTABLE_OBJECT_GRAPH", "save_counter/.ATTRIBUTES/VARIABLE_VALUE")}


def case(tally, driver, folder, kind, rng):
    os.makedirs(folder)
    model, inputs = make(kind, rng)
    feed = inputs if len(inputs) > 1 else inputs[0]
    y = rng.randn(*model(feed).shape).astype(np.float32)
    opt = keras.optimizers.Adam()
    step(model, opt, feed, y)
    ckpt = tf.train.Checkpoint(model=model, optimizer=opt)
    first = ckpt.save(os.path.join(folder, "keras/ckpt"))
    pred = model(feed).numpy()
    step(model, opt, feed, y)
    second = ckpt.save(os.path.join(folder, "keras/ckpt"))
    names = [f"x{i}" for i in range(len(inputs))] + ["y"]
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=list(inputs) + [y])
    out = os.path.join(folder, "eager")
    os.makedirs(out)
    try:
        run([driver, kind, feeds, first, out])
    except RuntimeError as e:
        tally.check(f"{kind}: eager restores Keras's checkpoint and steps", str(e)[:3000])
        return
    got_pred = tf.train.load_checkpoint(os.path.join(out, "pred")).get_tensor("pred")
    tally.check(f"{kind}: eager's prediction after restoring", close(got_pred, pred))
    # The restored save_counter numbers eager's file (ckpt-2 after Keras's ckpt-1).
    saved = [f[:-len(".index")] for f in os.listdir(out) if f.startswith("ckpt-")
             and f.endswith(".index")]
    if len(saved) != 1:
        tally.check(f"{kind}: eager saved one checkpoint", f"found {saved}")
        return
    want, got = values(second), values(os.path.join(out, saved[0]))
    tally.check(f"{kind}: eager's checkpoint has Keras's keys and shapes",
                None if {k: v.shape for k, v in got.items()} == {k: v.shape for k, v in want.items()}
                else f"eager {sorted(got)}\nKeras {sorted(want)}")
    noisy = noise_keys(kind, model)
    for key in sorted(want):
        if key in got:
            tally.check(f"{kind}: after the next step, {key}",
                        close(got[key], want[key], NOISE_TOL if key in noisy else TOL))


def main():
    driver, work = start(f"TF {tf.__version__}, Keras {keras.__version__}")
    rng = np.random.RandomState(38)
    tally = Tally()
    for kind in KINDS:
        case(tally, driver, os.path.join(work, kind), kind, rng)
    print(f"largest scaled difference: {WORST[0]:.3g} (tolerance {TOL})")
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
