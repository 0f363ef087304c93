"""Keras 3 (TF 2.21's tf.keras) judges eager's .weights.h5 and .keras (issue 40).

  keras_files_test.py driver=build/tests/tf_keras/keras_files_driver work=DIR

The model is keras_files_driver's: Sequential(Input((2, 3)), Flatten(),
Dense(4, relu), Dense(2)) compiled with Adam(0.01) and MSE, one fixed batch.
  eager -> Keras: eager takes a step and saves; Keras's load_weights (model
    and optimizer) predicts what eager printed, and its next step equals
    eager's next step from the same file.
  Keras -> eager: Keras takes a step and saves; eager loads, predicts what
    Keras predicts, takes one more step and saves; Keras loads that and
    predicts what its own second step gives.
  eager-ckpt: lists Keras's .weights.h5 and .keras and converts them to a
    name-based TF checkpoint that TF reads with h5py's values (independent
    of eager's HDF5 reader).
  legacy .h5: tf_keras's save_weights("m.h5") and model.save("m.h5") (HDF5
    with layer_names/weight_names attributes) load into eager's model, which
    predicts as tf_keras; asking for the optimizer too is a clear error.
  .keras: load_model of eager's archive predicts as eager with Adam
    iterations 1; eager loads Keras's model.save, predicts equally, steps and
    saves; Keras's load_model of that equals its own second step.
Floats agree to 1e-5 (matmul summation order).
"""

import os
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

keras = tf.keras
args = dict(a.split("=", 1) for a in sys.argv[1:])
driver, work = args["driver"], args["work"]
eager_ckpt = args.get("eager_ckpt")
os.makedirs(work, exist_ok=True)
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    passed, failed = passed + ok, failed + (not ok)


x = np.array([((i * 7) % 11) / 10.0 - 0.5 for i in range(24)], np.float32).reshape(4, 2, 3)
y = np.array([1, 0, 0, 1, 1, 1, 0, 0], np.float32).reshape(4, 2)


def make():
    m = keras.Sequential([keras.Input((2, 3)), keras.layers.Flatten(),
                          keras.layers.Dense(4, activation="relu"), keras.layers.Dense(2)])
    m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return m


def step(m):
    m.train_on_batch(x, y)


def close(a, b):
    return np.allclose(a, b, rtol=1e-5, atol=1e-5)


def run(*a):
    r = subprocess.run([driver, *a], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"driver {a} failed: {r.stderr}")
    return np.array([float(v) for v in r.stdout.split()], np.float32).reshape(4, 2)


# eager -> Keras
eager_file = os.path.join(work, "eager.weights.h5")
if os.path.exists(eager_file):
    os.remove(eager_file)
eager_pred = run("save", eager_file)
m = make()
m.optimizer.build(m.trainable_variables)
m.load_weights(eager_file)
check("keras predicts as eager from eager's file", close(m.predict(x, verbose=0), eager_pred))
check("keras restored iterations", int(m.optimizer.iterations.numpy()) == 1)
step(m)
eager_next = os.path.join(work, "eager_next.weights.h5")
run("load", eager_file, eager_next)
m2 = make()
m2.optimizer.build(m2.trainable_variables)
m2.load_weights(eager_next)
check("keras's next step equals eager's next step",
      close(m.predict(x, verbose=0), m2.predict(x, verbose=0)))

# Keras -> eager
k = make()
step(k)
keras_file = os.path.join(work, "keras.weights.h5")
k.save_weights(keras_file)


def h5_datasets(path):
    import h5py  # Keras's own dependency: an HDF5 reader independent of eager's
    found = {}
    with h5py.File(path, "r") as f:
        f.visititems(lambda name, o: found.__setitem__(name, o[()])
                     if isinstance(o, h5py.Dataset) else None)
    return found


def check_eager_ckpt(keras_path, weights_h5):
    """eager-ckpt list and convert on a Keras-written file."""
    want = h5_datasets(weights_h5)
    name = os.path.basename(keras_path)
    r = subprocess.run([eager_ckpt, "list", keras_path], capture_output=True, text=True)
    check(f"eager-ckpt list {name}", r.returncode == 0 and
          r.stdout.startswith(f"{keras_path}: {len(want)} tensors") and
          all(f"{k}  " in r.stdout for k in want), r.stdout + r.stderr)
    conv = os.path.join(work, "converted_" + name, "m")
    shutil.rmtree(os.path.dirname(conv), ignore_errors=True)
    r = subprocess.run([eager_ckpt, "convert", keras_path, conv], capture_output=True, text=True)
    check(f"eager-ckpt convert {name}", r.returncode == 0, r.stderr)
    reader = tf.train.load_checkpoint(conv)
    got = set(reader.get_variable_to_shape_map())
    check(f"{name} converted: TF lists keras's dataset paths", got == set(want),
          f"{sorted(got)} vs {sorted(want)}")
    check(f"{name} converted: TF reads h5py's values",
          got == set(want) and all(np.array_equal(reader.get_tensor(k), v) for k, v in want.items()))


if eager_ckpt:
    check_eager_ckpt(keras_file, keras_file)
out = os.path.join(work, "keras_then_eager.weights.h5")
pred = run("load", keras_file, out)
check("eager predicts as keras from keras's file", close(pred, k.predict(x, verbose=0)))
step(k)
k2 = make()
k2.optimizer.build(k2.trainable_variables)
k2.load_weights(out)
check("keras loads eager's continued file: same as keras's own second step",
      close(k2.predict(x, verbose=0), k.predict(x, verbose=0)))
check("iterations after eager's step", int(k2.optimizer.iterations.numpy()) == 2)

# .keras both ways: keras.models.load_model on eager's archive, eager's
# LoadKerasModel on Keras's model.save.
ek = os.path.join(work, "eager.keras")
if os.path.exists(ek):
    os.remove(ek)
pred = run("savekeras", ek)
km = keras.models.load_model(ek)
check("load_model of eager's .keras predicts as eager", close(km.predict(x, verbose=0), pred))
check("load_model restored Adam iterations", int(km.optimizer.iterations.numpy()) == 1)
k = make()
step(k)
kk = os.path.join(work, "keras.keras")
k.save(kk)
if eager_ckpt:
    import zipfile
    member = os.path.join(work, "keras_member.weights.h5")
    with zipfile.ZipFile(kk) as z, open(member, "wb") as f:
        f.write(z.read("model.weights.h5"))
    check_eager_ckpt(kk, member)
ko = os.path.join(work, "keras_then_eager.keras")
pred = run("loadkeras", kk, ko)
check("eager's LoadKerasModel of keras's .keras predicts as keras", close(pred, k.predict(x, verbose=0)))
step(k)
k3 = keras.models.load_model(ko)
check("keras loads eager's continued .keras: same as keras's own second step",
      close(k3.predict(x, verbose=0), k.predict(x, verbose=0)))

# tf_keras's legacy HDF5 files.
import tf_keras  # noqa: E402

lm = tf_keras.Sequential([tf_keras.layers.InputLayer((2, 3)), tf_keras.layers.Flatten(),
                          tf_keras.layers.Dense(4, activation="relu"), tf_keras.layers.Dense(2)])
lm.compile(optimizer=tf_keras.optimizers.Adam(0.01), loss="mse")
lm.train_on_batch(x, y)
for kind in ("save_weights", "save"):
    path = os.path.join(work, f"legacy_{kind}.h5")
    if os.path.exists(path):
        os.remove(path)
    getattr(lm, kind)(path)
    pred = run("loadlegacy", path)
    check(f"eager predicts as tf_keras from its legacy {kind}('m.h5')",
          close(pred, lm.predict(x, verbose=0)))
r = subprocess.run([driver, "load", path, os.path.join(work, "unused.weights.h5")],
                   capture_output=True, text=True)
check("legacy .h5 with an optimizer asked for: a clear error",
      r.returncode == 1 and "legacy .h5" in r.stderr and path in r.stderr, r.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
