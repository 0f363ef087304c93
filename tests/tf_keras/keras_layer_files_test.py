"""Keras 3 (TF 2.21's tf.keras) judges eager's layer library in .weights.h5
and .keras files (issue 40).

  keras_layer_files_test.py driver=build/tests/tf_keras/keras_layer_files_driver work=DIR

The models are keras_layer_files_driver.cc's Sequentials, built the same
here; together they use every layer eager saves:
  cnn    Conv2D(relu, same), BatchNormalization, MaxPooling2D, Dropout,
         Flatten, Dense; compiled with Adam (Dropout: no step compared)
  embed  Embedding, GlobalAveragePooling1D, Dense; compiled, stepped
  masked Embedding(mask_zero), BatchNormalization, GlobalAveragePooling1D,
         Dense; compiled, stepped: the mask reaches BatchNormalization's
         training moments and the pooling's mean
  rnn    SimpleRNN, LSTM(go_backwards), GRU(reset_after=False), GRU(no bias),
         each but the last with return_sequences, Dense; compiled, stepped
         (their variables sit in a "cell" sublayer group)
  convs  DepthwiseConv2D, SeparableConv2D, Conv2DTranspose, ZeroPadding2D,
         Cropping2D, AveragePooling2D(same), GlobalMaxPooling2D; compiled,
         stepped
  seq1d  Conv1D(causal, tanh), MaxPooling1D, AveragePooling1D,
         LayerNormalization, GlobalAveragePooling1D, RepeatVector, Permute,
         Reshape, Activation; not compiled
  more   Conv2D(dilated, no bias), GlobalAveragePooling2D(keepdims),
         Reshape, GlobalMaxPooling1D, BatchNormalization(center=False),
         LayerNormalization(scale=False), Dense(softmax); compiled, stepped
         (BatchNormalization's training step)

Keras -> eager: Keras takes a step (compiled) and writes .keras and
  .weights.h5; eager's LoadKerasModel and its own model with
  LoadKerasWeights predict as Keras. eager saves the loaded model again:
  Keras's load_model of it has Keras's optimizer variables. Stepped models:
  eager takes one step on both; Keras's load_model / load_weights of those
  predict as Keras's own second step.
eager -> Keras: eager builds (its own weights), steps (compiled) and saves;
  Keras's load_model and load_weights predict as eager; stepped models:
  Keras's next step from eager's files equals eager's next step.
tf_keras's legacy .h5 (save_weights("m.h5")) of each model loads into
eager's unbuilt model by layer order and predicts as tf_keras.
A Keras model whose Embedding mask would reach GlobalAveragePooling1D is
refused by eager's loader, naming both layers.
Predictions agree to 1e-5 * max(1, max|Keras|) (summation order).

The Embedding's ids repeat within the batch (24 lookups of 13 ids): Keras
3's Adam on TF squares an IndexedSlices gradient row by row (ops.square of
the slices, then scatter-added), so a repeated id's velocity is the sum of
the squares; tf_keras sums the rows first. eager's Minimize keeps the slices
and does each (GradientTape::GradientKeepingSlices).
"""

import os
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import tf_keras  # noqa: E402

keras = tf.keras
L = keras.layers
args = dict(a.split("=", 1) for a in sys.argv[1:])
driver, work = args["driver"], args["work"]
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    passed, failed = passed + ok, failed + (not ok)


def close(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=0,
                                              atol=1e-5 * max(1.0, np.abs(b).max()))


# name: (input shape, ids?, outputs, compiled, stepped, layers)
MODELS = {
    "cnn": ((8, 8, 3), False, 3, True, False, lambda L: [
        L.Conv2D(4, 3, padding="same", activation="relu"), L.BatchNormalization(),
        L.MaxPooling2D(), L.Dropout(0.5), L.Flatten(), L.Dense(3)]),
    "embed": ((6,), True, 2, True, True, lambda L: [
        L.Embedding(32, 4), L.GlobalAveragePooling1D(), L.Dense(2)]),
    # mask_zero's mask reaches BatchNormalization (masked moments in the
    # training step) and GlobalAveragePooling1D (the mean of the valid steps)
    "masked": ((6,), True, 2, True, True, lambda L: [
        L.Embedding(32, 4, mask_zero=True), L.BatchNormalization(), L.GlobalAveragePooling1D(),
        L.Dense(2)]),
    "rnn": ((5, 3), False, 2, True, True, lambda L: [
        L.SimpleRNN(4, return_sequences=True), L.LSTM(4, return_sequences=True, go_backwards=True),
        L.GRU(3, reset_after=False, return_sequences=True), L.GRU(3, use_bias=False),
        L.Dense(2)]),
    "convs": ((8, 8, 3), False, 2, True, True, lambda L: [
        L.DepthwiseConv2D(3, padding="same", depth_multiplier=2),
        L.SeparableConv2D(4, 3, activation="relu"), L.Conv2DTranspose(3, 2, strides=2),
        L.ZeroPadding2D(((1, 0), (2, 1))), L.Cropping2D(((0, 1), (1, 0))),
        L.AveragePooling2D(2, strides=1, padding="same"), L.GlobalMaxPooling2D(),
        L.Dense(2, activation="tanh")]),
    "seq1d": ((10, 4), False, 2, False, False, lambda L: [
        L.Conv1D(3, 3, padding="causal", activation="tanh"), L.MaxPooling1D(2),
        L.AveragePooling1D(2, padding="same"), L.LayerNormalization(),
        L.GlobalAveragePooling1D(), L.RepeatVector(3), L.Permute((2, 1)), L.Reshape((-1,)),
        L.Activation("sigmoid"), L.Dense(2)]),
    "more": ((6, 6, 2), False, 2, True, True, lambda L: [
        L.Conv2D(2, 3, dilation_rate=2, use_bias=False), L.GlobalAveragePooling2D(keepdims=True),
        L.Reshape((1, 2)), L.GlobalMaxPooling1D(),
        L.BatchNormalization(momentum=0.9, epsilon=1e-2, center=False),
        L.LayerNormalization(scale=False), L.Dense(2, activation="softmax")]),
}


def data(name):
    shape, ids, outputs = MODELS[name][:3]
    n = 4 * int(np.prod(shape))
    i = np.arange(n)
    x = ((i * 7) % 13).astype(np.int32) if ids else (((i * 7) % 11) / 10.0 - 0.5).astype(np.float32)
    j = np.arange(4 * outputs)
    return x.reshape((4,) + shape), (((j * 5) % 3) / 2.0).astype(np.float32).reshape(4, outputs)


def make(name):
    shape, ids, _, compiled = MODELS[name][:4]
    m = keras.Sequential([keras.Input(shape, dtype="int32" if ids else "float32")] +
                         MODELS[name][5](keras.layers))
    if compiled:
        m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return m


def run(*a):
    r = subprocess.run([driver, *a], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"driver {a} failed: {r.stderr}")
    return [np.array([float(v) for v in line.split()], np.float32)
            for line in r.stdout.splitlines()]


def fresh(name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


for name, (shape, ids, outputs, compiled, stepped, _) in MODELS.items():
    x, y = data(name)

    # Keras -> eager
    d = fresh(name + "_k2e")
    k = make(name)
    if compiled:
        k.train_on_batch(x, y)
    want = k.predict(x, verbose=0)
    k.save(os.path.join(d, "keras.keras"))
    k.save_weights(os.path.join(d, "keras.weights.h5"))
    got = run("k2e", name, d, *(["step"] if stepped else []))
    check(f"{name}: eager's LoadKerasModel predicts as Keras", close(got[0].reshape(want.shape), want))
    check(f"{name}: eager's model with LoadKerasWeights predicts as Keras",
          close(got[1].reshape(want.shape), want))
    back = keras.models.load_model(os.path.join(d, "eager_resave.keras"))
    check(f"{name}: Keras loads eager's re-saved .keras, same predictions",
          close(back.predict(x, verbose=0), want))
    if compiled:
        ok = len(back.optimizer.variables) == len(k.optimizer.variables) and all(
            np.array_equal(a.numpy(), b.numpy())
            for a, b in zip(back.optimizer.variables, k.optimizer.variables))
        check(f"{name}: eager's re-saved .keras holds Keras's Adam variables", ok,
              f"{len(back.optimizer.variables)} vs {len(k.optimizer.variables)}")
    if stepped:
        k.train_on_batch(x, y)
        want2 = k.predict(x, verbose=0)
        ks = keras.models.load_model(os.path.join(d, "eager_step.keras"))
        check(f"{name}: eager's step on the loaded .keras equals Keras's second step",
              close(ks.predict(x, verbose=0), want2))
        check(f"{name}: iterations 2 after eager's step", int(ks.optimizer.iterations.numpy()) == 2)
        kw = make(name)
        kw.optimizer.build(kw.trainable_variables)
        kw.load_weights(os.path.join(d, "eager_step.weights.h5"))
        check(f"{name}: eager's step after LoadKerasWeights equals Keras's second step",
              close(kw.predict(x, verbose=0), want2))

    # eager -> Keras
    d = fresh(name + "_e2k")
    got = run("e2k", name, d, "compiled" if compiled else "plain")
    km = keras.models.load_model(os.path.join(d, "eager.keras"))
    pred = km.predict(x, verbose=0)
    check(f"{name}: Keras's load_model of eager's .keras predicts as eager",
          close(got[0].reshape(pred.shape), pred))
    kw = make(name)
    check(f"{name}: eager's .keras config: Keras's class names",
          [type(layer).__name__ for layer in km.layers] ==
          [type(layer).__name__ for layer in kw.layers])
    if compiled:
        kw.optimizer.build(kw.trainable_variables)
    kw.load_weights(os.path.join(d, "eager.weights.h5"))
    check(f"{name}: Keras's load_weights of eager's .weights.h5 predicts as eager",
          close(got[0].reshape(pred.shape), kw.predict(x, verbose=0)))
    if compiled:
        check(f"{name}: Keras restored iterations 1", int(km.optimizer.iterations.numpy()) == 1)
    if stepped:
        km.train_on_batch(x, y)
        kw.train_on_batch(x, y)
        check(f"{name}: Keras's next step from eager's .keras equals eager's",
              close(got[1].reshape(pred.shape), km.predict(x, verbose=0)))
        check(f"{name}: Keras's next step from eager's .weights.h5 equals eager's",
              close(got[1].reshape(pred.shape), kw.predict(x, verbose=0)))

# tf_keras's legacy save_weights("m.h5") of the same models (those with
# BatchNormalization trained one step, so its moving statistics are not the
# initial ones):
# eager's unbuilt model loads it by layer order, built from the file's shapes.
for name, (shape, ids, outputs, compiled, stepped, layers) in MODELS.items():
    x, y = data(name)
    t = tf_keras.Sequential([tf_keras.Input(shape, dtype="int32" if ids else "float32")] +
                            layers(tf_keras.layers))
    if any(isinstance(layer, tf_keras.layers.BatchNormalization) for layer in t.layers):
        t.compile(optimizer=tf_keras.optimizers.Adam(0.01), loss="mse")
        t.train_on_batch(x, y)
    d = fresh(name + "_legacy")
    path = os.path.join(d, "legacy.h5")
    t.save_weights(path)
    want = t.predict(x, verbose=0)
    got = run("legacy", name, path)
    check(f"{name}: eager loads tf_keras's legacy .h5 into an unbuilt model, predicts as tf_keras",
          close(got[0].reshape(want.shape), want))

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
