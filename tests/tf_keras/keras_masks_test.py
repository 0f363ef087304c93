"""Keras 3's masks and Dropout against eager's (autodiff/layer.h's masks,
autodiff/layers/recurrent.h, attention.h, regularization.h).

  keras_masks_test.py driver=build/tests/tf_keras/keras_masks_driver work=DIR

Cases (TF 2.21, Keras 3), each with random weights set on both sides:
  Sequential(Input((6,), int32), Embedding(10, 4, mask_zero=True), RNN(3),
    Dense(2)) for SimpleRNN, LSTM, GRU, with return_sequences and
    go_backwards, on ids padded with zeros (at the end, in the middle, at the
    start): the Embedding's mask reaches the layer, masked steps carry the
    states and repeat the last output. The "-drop" cases add dropout=0.3,
    recurrent_dropout=0.2, seed=7 and make the training call with Keras's
    first masks (seeds [7, 0], [7, 1], ...: SimpleRNN one for the inputs
    and one for the state, LSTM and GRU, which Keras then runs as its
    implementation 1, one per gate of each kind).
  MultiHeadAttention(2, 3) self-attention with use_causal_mask, with a random
    attention_mask, and after an Embedding(mask_zero=True) in a functional
    model (the input's mask as query and value mask).
For each: the prediction and the gradients of mean((pred - y)^2) with
respect to every weight (what one training step applies) agree within 1e-5
* max(1, max|TF|).
Dropout(0.3, seed=1234) called three times in training: eager's outputs equal
Keras 3's bit for bit (both draw tf.random.stateless_uniform with the seeds
[1234, 0], [1234, 1], [1234, 2]), and the three masks differ.
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
KINDS = ["simple", "simple-seq", "lstm", "lstm-seq", "lstm-back", "gru", "gru-seq",
         "gru-seq-back", "simple-drop", "lstm-drop", "gru-seq-drop", "mha-causal", "mha-mask",
         "mha-embedded"]
# Zeros at the end, in the middle and at the start (id 0 is masked).
IDS = np.array([[3, 5, 2, 0, 0, 0], [4, 0, 7, 1, 9, 0], [0, 0, 6, 8, 2, 5]], np.int32)
WORST = [0.0]


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    WORST[0] = max(WORST[0], diff / scale)
    return None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g}"


def make(kind, rng):
    """(model, inputs x, extra feeds)."""
    if kind == "mha-embedded":
        ids = keras.Input((IDS.shape[1],), dtype="int32")
        e = keras.layers.Embedding(10, 4, mask_zero=True)(ids)
        out = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(e, e)
        return keras.Model(ids, out), IDS, {}
    if kind.startswith("mha"):
        x = rng.randn(3, 5, 4).astype(np.float32)
        layer = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)
        if kind == "mha-causal":
            return (lambda v: layer(v, v, use_causal_mask=True)), x, {"layer": layer}
        mask = rng.rand(3, 5, 5) < 0.6
        mask[:, :, 0] = True  # no query without a key
        return ((lambda v: layer(v, v, attention_mask=mask)), x,
                {"layer": layer, "mask": mask.astype(np.int32)})
    parts = kind.split("-")
    rnn = {"simple": keras.layers.SimpleRNN, "lstm": keras.layers.LSTM,
           "gru": keras.layers.GRU}[parts[0]]
    drop = {"dropout": 0.3, "recurrent_dropout": 0.2, "seed": 7} if "drop" in parts else {}
    model = keras.Sequential([keras.Input((IDS.shape[1],), dtype="int32"),
                              keras.layers.Embedding(10, 4, mask_zero=True),
                              rnn(3, return_sequences="seq" in parts,
                                  go_backwards="back" in parts, **drop),
                              keras.layers.Dense(2)])
    if not drop:
        return model, IDS, {}

    def training_call(ids):
        # Keras draws the masks on every call; start again at [7, 0].
        model.layers[1].cell.seed_generator.state.assign([7, 0])
        return model(ids, training=True)
    return training_call, IDS, {"layer": model}


def case(tally, driver, folder, kind, rng):
    os.makedirs(folder)
    model, x, extra = make(kind, rng)
    model(x)  # builds
    holder = extra.get("layer", model)
    variables = holder.trainable_variables
    w = [rng.randn(*v.shape).astype(np.float32) * 0.5 for v in variables]
    for var, value in zip(variables, w):
        var.assign(value)
    y = rng.randn(*model(x).shape).astype(np.float32)
    with tf.GradientTape() as tape:
        pred = model(x)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = [tf.convert_to_tensor(g).numpy() for g in tape.gradient(loss, variables)]
    names = ["x", "y"] + [f"w{i}" for i in range(len(w))]
    tensors = [x, y] + w
    if "mask" in extra:
        names.append("mask")
        tensors.append(extra["mask"])
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=tensors)
    out = os.path.join(folder, "eager")
    try:
        run([driver, kind, feeds, out])
    except RuntimeError as e:
        tally.check(f"{kind}: the driver runs", str(e)[:2000])
        return
    reader = tf.train.load_checkpoint(out)
    tally.check(f"{kind}: prediction", close(reader.get_tensor("pred"), pred.numpy()))
    for i, (var, g) in enumerate(zip(variables, grads)):
        tally.check(f"{kind}: gradient of {var.path}", close(reader.get_tensor(f"g{i}"), g))


def dropout_case(tally, driver, folder, rng):
    os.makedirs(folder)
    x = rng.randn(4, 50).astype(np.float32)
    layer = keras.layers.Dropout(0.3, seed=1234)
    want = [layer(x, training=True).numpy() for _ in range(3)]
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=["x"], shape_and_slices=[""], tensors=[x])
    out = os.path.join(folder, "eager")
    try:
        run([driver, "dropout", feeds, out])
    except RuntimeError as e:
        tally.check("dropout: the driver runs", str(e)[:2000])
        return
    reader = tf.train.load_checkpoint(out)
    for i in range(3):
        got = reader.get_tensor(f"d{i}")
        tally.check(f"dropout: training call {i} equals Keras 3's bit for bit",
                    None if np.array_equal(got, want[i]) else
                    f"{int(np.sum(got != want[i]))} of {got.size} values differ")
    masks = [tuple((w == 0).ravel()) for w in want]
    tally.check("dropout: each call draws a new mask",
                None if len(set(masks)) == 3 else "two calls drew the same mask")


def main():
    driver, work = start(f"TF {tf.__version__}, Keras {keras.__version__}")
    rng = np.random.RandomState(38)
    tally = Tally()
    for kind in KINDS:
        case(tally, driver, os.path.join(work, kind), kind, rng)
    dropout_case(tally, driver, os.path.join(work, "dropout"), rng)
    print(f"largest scaled difference: {WORST[0]:.3g} (tolerance {TOL})")
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
