"""Keras 3's masks in functional models and Sequentials against eager's
(autodiff/layer.h, autodiff/functional.h, autodiff/internal/keras_operations.h).

  keras_functional_masks_test.py driver=build/tests/tf_keras/keras_functional_masks_driver work=DIR

For each model of keras_functional_masks_driver.cc's KINDs, built in TF 2.21's
Keras 3 with random weights and fed ids padded with zeros (at the end, in the
middle, at the start; or float steps of zeros for Masking):
  - Keras 3's model.operations (model._functional.operations for a
    Sequential), with the mask ops it records (NotEqual, Any, LogicalOr,
    ExpandDims, ZerosLike, Concatenate), equal eager's;
  - eager restores tf.train.Checkpoint(model=) in the Keras 3 layout with
    assert-consumed (so every "_operations/<i>" index matches) and predicts
    within 1e-5 * max(1, max|Keras|) of Keras's prediction;
  - eager builds the same model from Keras's .keras file (config.json lists
    the mask ops and passes them as "mask" arguments), with the same
    operations and prediction;
  - eager saves the restored model as a .keras file, which Keras's
    load_model reads into the same operations and prediction.
The same models in tf_keras (Keras 2, whose masks follow the same rules and
which records no mask ops): eager restores its tf.train.Checkpoint in the
kKeras2 layout with assert-consumed and predicts as tf_keras.
"""

import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from kerastest import Tally, run, start  # noqa: E402

TOL = 1e-5
KINDS = ["fn-emb-lstm", "fn-emb-dense-gru", "fn-add", "fn-concat", "fn-masking", "fn-mha",
         "seq-emb-dense-lstm", "seq-emb-conv-lstm", "fn-nested-in", "fn-nested-out",
         "seq-nested"]
IDS = np.array([[3, 5, 2, 0, 0, 0], [4, 0, 7, 1, 9, 0], [0, 0, 6, 8, 2, 5]], np.int32)
IDS2 = np.array([[1, 0, 0, 0, 0, 0], [4, 2, 0, 0, 0, 0], [0, 0, 0, 0, 2, 5]], np.int32)
WORST = [0.0]


def make(kind, keras):
    """(model, inputs) in `keras` (Keras 3 or tf_keras)."""
    L = keras.layers
    out = L.Dense(2)
    if kind == "seq-nested":  # the mask through a nested Sequential's Dense
        return keras.Sequential([keras.Input((6,), dtype="int32"),
                                 L.Embedding(10, 4, mask_zero=True),
                                 keras.Sequential([keras.Input((6, 4)), L.Dense(4)]), L.LSTM(3),
                                 out]), [IDS]
    if kind == "fn-nested-in":  # the outer Embedding's mask into an inner LSTM
        steps = keras.Input((6, 4))
        inner = keras.Model(steps, L.LSTM(3)(steps))
        ids = keras.Input((6,), dtype="int32")
        return keras.Model(ids, out(inner(L.Embedding(10, 4, mask_zero=True)(ids)))), [IDS]
    if kind == "fn-nested-out":  # an inner Embedding's mask into an outer LSTM
        inner_ids = keras.Input((6,), dtype="int32")
        inner = keras.Model(inner_ids, L.Embedding(10, 4, mask_zero=True)(inner_ids))
        ids = keras.Input((6,), dtype="int32")
        return keras.Model(ids, out(L.LSTM(3)(inner(ids)))), [IDS]
    if kind.startswith("seq-"):
        middle = L.Dense(4) if kind == "seq-emb-dense-lstm" else L.Conv1D(4, 2)
        return keras.Sequential([keras.Input((6,), dtype="int32"),
                                 L.Embedding(10, 4, mask_zero=True), middle, L.LSTM(3),
                                 out]), [IDS]
    if kind in ("fn-add", "fn-concat"):
        a, b = keras.Input((6,), dtype="int32"), keras.Input((6,), dtype="int32")
        e1, e2 = L.Embedding(10, 4, mask_zero=True)(a), L.Embedding(10, 4, mask_zero=True)(b)
        if kind == "fn-add":
            h = L.LSTM(3)(L.Add()([e1, e2]))
        else:
            h = L.SimpleRNN(3)(L.Concatenate()([e1, e2]))
        return keras.Model([a, b], out(h)), [IDS, IDS2]
    if kind == "fn-masking":
        x = keras.Input((6, 2))
        rng = np.random.RandomState(5)
        steps = rng.randn(3, 6, 2).astype(np.float32)
        steps[IDS == 0] = 0.0
        return keras.Model(x, out(L.LSTM(3)(L.Masking(0.0)(x)))), [steps]
    ids = keras.Input((6,), dtype="int32")
    e = L.Embedding(10, 4, mask_zero=True)(ids)
    if kind == "fn-emb-lstm":
        h = L.LSTM(3)(e)
    elif kind == "fn-emb-dense-gru":
        h = L.GlobalAveragePooling1D()(L.GRU(3, return_sequences=True)(L.Dense(4)(e)))
    else:
        h = L.GlobalAveragePooling1D()(L.MultiHeadAttention(num_heads=2, key_dim=3)(e, e))
    return keras.Model(ids, out(h)), [IDS]


def kinds_of(model):
    ops = model._functional.operations if isinstance(model, keras.Sequential) else model.operations
    names = []
    for op in ops:
        if isinstance(op, keras.layers.InputLayer):
            names.append("Input")
        elif isinstance(op, keras.layers.Layer):
            names.append("Layer")
        else:
            names.append(type(op).__name__)
    return ",".join(names)


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, Keras {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    WORST[0] = max(WORST[0], diff / scale)
    return None if diff <= TOL * scale else f"max |eager - Keras| = {diff:.3g}"


def prepare(folder, model, xs, rng):
    """Random weights on `model`; its prediction on xs, its checkpoint and the
    feeds bundle written under `folder`: (pred, ckpt, feeds, out)."""
    os.makedirs(folder)
    x = xs if len(xs) > 1 else xs[0]
    model(x)  # builds
    for var in model.weights:
        var.assign(rng.randn(*var.shape).astype(np.float32) * 0.5)
    pred = model(x).numpy()
    ckpt = tf.train.Checkpoint(model=model).save(os.path.join(folder, "ckpt"))
    names = ["x"] + (["x2"] if len(xs) > 1 else [])
    feeds = os.path.join(folder, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=xs)
    return pred, ckpt, feeds, os.path.join(folder, "eager")


def tf_keras_case(tally, driver, folder, kind, rng):
    model, xs = make(kind, tf_keras)
    pred, ckpt, feeds, out = prepare(folder, model, xs, rng)
    try:
        run([driver, kind, feeds, ckpt, "-", out, "keras2"])
    except RuntimeError as e:
        tally.check(f"tf_keras {kind}: the driver runs", str(e)[:2000])
        return
    reader = tf.train.load_checkpoint(out)
    tally.check(f"tf_keras {kind}: prediction after the checkpoint restore",
                close(reader.get_tensor("pred"), pred))


def case(tally, driver, folder, kind, rng):
    model, xs = make(kind, keras)
    pred, ckpt, feeds, out = prepare(folder, model, xs, rng)
    keras_file = os.path.join(folder, "m.keras")
    model.save(keras_file)
    try:
        run([driver, kind, feeds, ckpt, keras_file, out])
    except RuntimeError as e:
        tally.check(f"{kind}: the driver runs", str(e)[:2000])
        return
    reader = tf.train.load_checkpoint(out)
    want_ops = kinds_of(model)
    for key in ("ops", "ops_keras"):
        got = reader.get_tensor(key).decode()
        tally.check(f"{kind}: {key} are Keras 3's operations",
                    None if got == want_ops else f"eager {got}, Keras {want_ops}")
    tally.check(f"{kind}: prediction after the checkpoint restore",
                close(reader.get_tensor("pred"), pred))
    tally.check(f"{kind}: prediction of the model read from the .keras file",
                close(reader.get_tensor("pred_keras"), pred))
    back = keras.models.load_model(out + ".keras")
    tally.check(f"{kind}: Keras loads eager's .keras, same operations",
                None if kinds_of(back) == want_ops else f"{kinds_of(back)}, want {want_ops}")
    tally.check(f"{kind}: Keras's prediction with eager's .keras",
                close(back(xs if len(xs) > 1 else xs[0]).numpy(), pred))


def main():
    driver, work = start(f"TF {tf.__version__}, Keras {keras.__version__}")
    rng = np.random.RandomState(41)
    tally = Tally()
    for kind in KINDS:
        case(tally, driver, os.path.join(work, kind), kind, rng)
    for kind in KINDS:
        tf_keras_case(tally, driver, os.path.join(work, "tf_keras-" + kind), kind, rng)
    print(f"largest scaled difference: {WORST[0]:.3g} (tolerance {TOL})")
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
