"""TF 2.21 judges `eager-ckpt convert --keras-model` (issue 40): a Keras 3
model's TF checkpoint to the .weights.h5 Keras's load_weights() accepts,
and back.

  keras_convert_test.py ckpt=build/saving/eager-ckpt work=DIR

For a compiled Sequential (Dense, Dense) and a functional model (two
inputs, Concatenate, shared Dense), each trained one Adam step:
  tf.train.Checkpoint(model=m, optimizer=m.optimizer).write(P), and
  m.save(M.keras) for the structure;
  eager-ckpt convert P out.weights.h5 --keras-model M.keras; a fresh Keras
  model's load_weights(out.weights.h5) predicts as m (1e-6) and holds m's
  optimizer variables; its next step equals m's next step;
  m.save_weights(w.weights.h5); eager-ckpt convert w.weights.h5 Q
  --keras-model M.keras; a fresh model's tf.train.Checkpoint(model=,
  optimizer=).read(Q) matches every object and predicts as m.
A checkpoint of another model is an error naming what did not match.
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
L = keras.layers
args = dict(a.split("=", 1) for a in sys.argv[1:])
ckpt_tool, work = args["ckpt"], args["work"]
passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    passed, failed = passed + ok, failed + (not ok)


def close(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=0, atol=1e-6 * max(1.0, np.abs(b).max()))


def outputs(m, x):
    p = m.predict(x, verbose=0)
    return p if isinstance(p, list) else [p]


def ramp(rows, cols, step):
    i = np.arange(rows * cols)
    return (((i * step) % 11) / 10.0 - 0.5).astype(np.float32).reshape(rows, cols)


def sequential():
    m = keras.Sequential([keras.Input((3,)), L.Dense(4, activation="tanh"), L.Dense(2)])
    return m, ramp(4, 3, 7), ramp(4, 2, 5)


def functional():
    a, b = keras.Input((3,)), keras.Input((2,))
    shared = L.Dense(3, activation="relu")
    c = L.Concatenate()([shared(L.Dense(3)(a)), shared(L.Dense(3)(b))])
    m = keras.Model([a, b], L.Dense(2)(c))
    return m, [ramp(4, 3, 7), ramp(4, 2, 3)], ramp(4, 2, 5)


def compiled(make):
    m, x, y = make()
    m.compile(optimizer=keras.optimizers.Adam(0.01), loss="mse")
    return m, x, y


def tool(*a):
    return subprocess.run([ckpt_tool, "convert", *a], capture_output=True, text=True)


for name, make in [("sequential", sequential), ("functional", functional)]:
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    m, x, y = compiled(make)
    m.train_on_batch(x, y)
    want = outputs(m, x)
    prefix = tf.train.Checkpoint(model=m, optimizer=m.optimizer).write(os.path.join(d, "tf"))
    structure = os.path.join(d, "m.keras")
    m.save(structure)

    out = os.path.join(d, "out.weights.h5")
    r = tool(prefix, out, "--keras-model", structure)
    check(f"{name}: TF checkpoint -> .weights.h5 converts", r.returncode == 0, r.stderr)
    k, _, _ = compiled(make)
    k.optimizer.build(k.trainable_variables)
    k.load_weights(out)
    check(f"{name}: Keras's load_weights of the converted file predicts as the model",
          all(close(g, w) for g, w in zip(outputs(k, x), want)))
    check(f"{name}: ... and holds its optimizer variables",
          len(k.optimizer.variables) == len(m.optimizer.variables) and all(
              np.array_equal(a.numpy(), b.numpy())
              for a, b in zip(k.optimizer.variables, m.optimizer.variables)))

    w = os.path.join(d, "w.weights.h5")
    m.save_weights(w)
    back = os.path.join(d, "back")
    r = tool(w, back, "--keras-model", structure)
    check(f"{name}: .weights.h5 -> TF checkpoint converts", r.returncode == 0, r.stderr)
    k2, _, _ = compiled(make)
    k2.optimizer.build(k2.trainable_variables)
    status = tf.train.Checkpoint(model=k2, optimizer=k2.optimizer).read(back)
    try:
        status.assert_existing_objects_matched()
        matched = True
    except AssertionError as e:
        matched = str(e)
    check(f"{name}: TF restores the converted checkpoint, every object matched", matched is True,
          str(matched))
    check(f"{name}: ... and predicts as the model",
          all(close(g, w) for g, w in zip(outputs(k2, x), want)))
    m.train_on_batch(x, y)
    k.train_on_batch(x, y)
    k2.train_on_batch(x, y)
    want2 = outputs(m, x)
    check(f"{name}: Keras's next step from both conversions equals the model's",
          all(close(g, w) for g, w in zip(outputs(k, x), want2)) and
          all(close(g, w) for g, w in zip(outputs(k2, x), want2)))

# A checkpoint of another model: an error naming what did not match.
d = os.path.join(work, "sequential")
r = tool(os.path.join(work, "functional", "tf"), os.path.join(d, "bad.weights.h5"),
         "--keras-model", os.path.join(d, "m.keras"))
check("a checkpoint of another model is an error naming the edge found",
      r.returncode != 0 and "(root).model" in r.stderr and "'_operations'" in r.stderr, r.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
