"""Keras 3 (TF 2.21's tf.keras) judges functional models in eager's .keras
and .weights.h5 files (issue 40).

  keras_functional_files_test.py driver=build/tests/tf_keras/keras_functional_files_driver work=DIR

The model is keras_functional_files_driver.cc's, built the same here: two
inputs, two outputs, a Dense shared by three calls, Concatenate, Add,
Multiply and a nested Sequential; compiled with Adam and "mse".

Keras -> eager: Keras takes a step and writes .keras ("Functional" config
  with inbound_nodes) and .weights.h5; eager's LoadKerasModel and its own
  model with LoadKerasWeights predict as Keras. Keras loads eager's re-saved
  .keras with Keras's Adam variables; eager's step on the loaded model and
  on its own equals Keras's second step.
eager -> Keras: eager steps its model and saves; Keras's load_model (a
  functional model of Keras's layer classes) and load_weights predict as
  eager, and Keras's next step from both equals eager's.
Nested models (the driver's *_nested modes): a functional "enc" holding
  a Sequential, called twice inside the functional "outer", and a second
  one inside the Sequential "holder", and a two-input functional "pair"
  called on a list inside "duo"; both ways as above (Keras's configs
  and weights groups nest: layers/functional/layers/sequential/...), and a
  nested layer class eager lacks names its nested config path.
Bad configs: a layer class eager lacks and a dangling keras_history are
  errors naming the config path.
Predictions agree to 1e-5 * max(1, max|Keras|).
"""

import json
import os
import shutil
import subprocess
import sys
import zipfile

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

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


def all_close(got, want):
    return len(got) == len(want) and all(close(g.reshape(w.shape), w) for g, w in zip(got, want))


def ramp(rows, cols, step, mod, scale, shift):
    i = np.arange(rows * cols)
    return (((i * step) % mod) * scale + shift).astype(np.float32).reshape(rows, cols)


X = [ramp(4, 3, 7, 11, 0.1, -0.5), ramp(4, 2, 5, 11, 0.1, -0.5)]
Y = [ramp(4, 3, 5, 3, 0.5, 0.0), ramp(4, 4, 5, 3, 0.5, 0.0)]


def make(lr):
    a, b = keras.Input((3,), name="a"), keras.Input((2,), name="b")
    ta, tb = L.Dense(4, name="pa")(a), L.Dense(4, name="pb")(b)
    shared = L.Dense(4, activation="relu", name="shared")
    c = L.Concatenate(name="cat")([shared(ta), shared(tb)])
    s = L.Add(name="add")([shared(ta), tb])
    inner = keras.Sequential([L.Dense(3, name="i1")], name="inner")
    m = keras.Model([a, b], [inner(c), L.Multiply(name="multiply")([s, s])], name="towers")
    m.compile(optimizer=keras.optimizers.Adam(lr), loss="mse")
    return m


def predict(m):
    return [np.asarray(p) for p in m.predict(X, verbose=0)]


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


# Keras -> eager
d = fresh("k2e")
k = make(0.001)
k.train_on_batch(X, Y)
want = predict(k)
k.save(os.path.join(d, "keras.keras"))
k.save_weights(os.path.join(d, "keras.weights.h5"))
got = run("k2e", d)
check("eager's LoadKerasModel of a Functional .keras predicts as Keras", all_close(got[:2], want))
check("eager's model with LoadKerasWeights of Keras's functional .weights.h5 predicts as Keras",
      all_close(got[2:4], want))
back = keras.models.load_model(os.path.join(d, "eager_resave.keras"))
check("Keras loads eager's re-saved functional .keras, same predictions",
      all_close(predict(back), want))
check("eager's re-saved .keras holds Keras's Adam variables",
      len(back.optimizer.variables) == len(k.optimizer.variables) and all(
          np.array_equal(a.numpy(), b.numpy())
          for a, b in zip(back.optimizer.variables, k.optimizer.variables)))
k.train_on_batch(X, Y)
want2 = predict(k)
ks = keras.models.load_model(os.path.join(d, "eager_step.keras"))
check("eager's step on the loaded functional .keras equals Keras's second step",
      all_close(predict(ks), want2))
kw = make(0.001)
kw.optimizer.build(kw.trainable_variables)
kw.load_weights(os.path.join(d, "eager_step.weights.h5"))
check("eager's step after LoadKerasWeights equals Keras's second step",
      all_close(predict(kw), want2))

# eager -> Keras
d = fresh("e2k")
got = run("e2k", d)
km = keras.models.load_model(os.path.join(d, "eager.keras"))
check("Keras's load_model of eager's functional .keras predicts as eager",
      all_close(got[:2], predict(km)))
kw = make(0.01)
check("eager's Functional config: Keras's layer classes and names",
      [(type(x).__name__, x.name) for x in km.layers] ==
      [(type(x).__name__, x.name) for x in kw.layers],
      str([(type(x).__name__, x.name) for x in km.layers]))
check("eager's Functional config: the shared Dense has three calls",
      len(km.get_layer("shared")._inbound_nodes) == 3)
kw.optimizer.build(kw.trainable_variables)
kw.load_weights(os.path.join(d, "eager.weights.h5"))
check("Keras's load_weights of eager's functional .weights.h5 predicts as eager",
      all_close(got[:2], predict(kw)))
check("Keras restored iterations 1", int(km.optimizer.iterations.numpy()) == 1)
km.train_on_batch(X, Y)
kw.train_on_batch(X, Y)
check("Keras's next step from eager's functional .keras equals eager's",
      all_close(got[2:4], predict(km)))
check("Keras's next step from eager's functional .weights.h5 equals eager's",
      all_close(got[2:4], predict(kw)))


# Nested models both ways.
YN = Y[0][:, :2]


def make_enc(name):
    ea = keras.Input((3,), name="ea")
    es = keras.Sequential([L.Dense(3, name="s1")], name="es")
    return keras.Model(ea, es(L.Dense(4, activation="tanh", name="e1")(ea)), name=name)


def make_nested(lr):
    enc = make_enc("enc")
    x = keras.Input((3,), name="x")
    s = L.Add(name="sum")([enc(x), enc(L.Dense(3, name="pre")(x))])
    outer = keras.Model(x, L.Dense(2, name="od")(s), name="outer")
    holder = keras.Sequential([keras.Input((3,)), make_enc("enc2"), L.Dense(2, name="hd")],
                              name="holder")
    pa, pb = keras.Input((3,), name="pa"), keras.Input((3,), name="pb")
    pair = keras.Model([pa, pb], L.Dense(2, name="pd")(L.Add(name="pp")([pa, pb])), name="pair")
    x = keras.Input((3,), name="x")
    duo = keras.Model(x, pair([x, L.Dense(3, name="dpre")(x)]), name="duo")
    for m in (outer, holder, duo):
        m.compile(optimizer=keras.optimizers.Adam(lr), loss="mse")
    return outer, holder, duo


NESTED = ("outer", "holder", "duo")


def predict1(m):
    return np.asarray(m.predict(X[0], verbose=0))


d = fresh("k2e_nested")
ks = make_nested(0.001)
for name, m in zip(NESTED, ks):
    m.train_on_batch(X[0], YN)
    m.save(os.path.join(d, name + ".keras"))
want = [predict1(m) for m in ks]
got = run("k2e_nested", d)
check("eager's LoadKerasModel of a Functional nesting a Functional (nesting a Sequential) "
      "predicts as Keras", all_close(got[:1], want[:1]))
check("eager's LoadKerasModel of a Sequential nesting a Functional predicts as Keras",
      all_close(got[1:2], want[1:2]))
check("eager's LoadKerasModel of a Functional calling a two-input Functional on a list predicts "
      "as Keras", all_close(got[2:3], want[2:]))
for m in ks:
    m.train_on_batch(X[0], YN)
for name, m in zip(NESTED, ks):
    back = keras.models.load_model(os.path.join(d, f"eager_{name}.keras"))
    check(f"eager's step on the loaded nested '{name}' equals Keras's second step",
          int(back.optimizer.iterations.numpy()) == 2 and close(predict1(back), predict1(m)))

d = fresh("e2k_nested")
got = run("e2k_nested", d)
ko, kh, kd = (keras.models.load_model(os.path.join(d, n + ".keras")) for n in NESTED)
check("Keras's load_model of eager's nested functional .keras predicts as eager",
      all_close(got[:1], [predict1(ko)]))
check("Keras's load_model of eager's Sequential nesting a functional Model predicts as eager",
      all_close(got[1:2], [predict1(kh)]))
check("Keras's load_model of eager's Functional calling a two-input Functional predicts as eager",
      all_close(got[2:3], [predict1(kd)]))
pair = kd.get_layer("pair")
check("eager's nested config: 'pair' is a two-input Functional called on a list",
      type(pair).__name__ == "Functional" and len(pair.inputs) == 2 and
      len(pair._inbound_nodes) == 1 and len(pair._inbound_nodes[0].input_tensors) == 2,
      type(pair).__name__)
with zipfile.ZipFile(os.path.join(d, "duo.keras")) as z:
    eager_ends = json.loads(z.read("config.json"))["config"]["output_layers"]
keras_ends = make_nested(0.01)[2].get_config()["output_layers"]
check("eager's output_layers count a nested Model's nodes from 1, as Keras's",
      eager_ends == keras_ends, f"{eager_ends} vs Keras's {keras_ends}")
enc = ko.get_layer("enc")
check("eager's nested config: 'enc' is a Functional called twice, holding Sequential 'es'",
      type(enc).__name__ == "Functional" and len(enc._inbound_nodes) == 2 and
      type(enc.get_layer("es")).__name__ == "Sequential",
      f"{type(enc).__name__} {len(enc._inbound_nodes)}")
check("eager's Sequential holds the Functional 'enc2'",
      [type(x).__name__ for x in kh.layers] == ["Functional", "Dense"],
      str([type(x).__name__ for x in kh.layers]))
for m in (ko, kh, kd):
    m.train_on_batch(X[0], YN)
check("Keras's next step from eager's nested .keras files equals eager's",
      all_close(got[3:6], [predict1(ko), predict1(kh), predict1(kd)]))


def nested_unknown(config):
    layers = config["config"]["layers"]
    i = next(i for i, x in enumerate(layers) if x["config"]["name"] == "enc")
    inner = layers[i]["config"]["layers"]
    j = next(j for j, x in enumerate(inner) if x["config"]["name"] == "e1")
    inner[j]["class_name"] = "ConvLSTM2D"
    return f"config.layers[{i}].config.layers[{j}].class_name"


src = os.path.join(work, "e2k_nested", "outer.keras")
dd = fresh("nested_unknown")
with zipfile.ZipFile(src) as z:
    members = {n: z.read(n) for n in z.namelist()}
config = json.loads(members["config.json"])
where = nested_unknown(config)
members["config.json"] = json.dumps(config).encode()
with zipfile.ZipFile(os.path.join(dd, "outer.keras"), "w") as z:
    for n, data in members.items():
        z.writestr(n, data)
for n in NESTED[1:]:
    shutil.copy(os.path.join(work, "e2k_nested", n + ".keras"), dd)
r = subprocess.run([driver, "k2e_nested", dd], capture_output=True, text=True)
check("a layer class eager lacks in a nested model names its nested config path",
      r.returncode == 1 and where in r.stderr and "'ConvLSTM2D'" in r.stderr, r.stderr)

# Bad configs name their config path.
def corrupt(name, edit):
    src = os.path.join(work, "k2e", "keras.keras")
    dd = fresh(name)
    with zipfile.ZipFile(src) as z:
        members = {n: z.read(n) for n in z.namelist()}
    config = json.loads(members["config.json"])
    edit(config)
    members["config.json"] = json.dumps(config).encode()
    with zipfile.ZipFile(os.path.join(dd, "keras.keras"), "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    return subprocess.run([driver, "k2e", dd], capture_output=True, text=True)


def unknown_class(config):
    config["config"]["layers"][5]["class_name"] = "ConvLSTM2D"


r = corrupt("unknown_class", unknown_class)
check("a layer class eager lacks names its config path",
      r.returncode == 1 and "config.layers[5].class_name" in r.stderr and "'ConvLSTM2D'" in r.stderr,
      r.stderr)


def dangling(config):
    node = config["config"]["layers"][6]["inbound_nodes"][0]
    node["args"][0][0]["config"]["keras_history"] = ["shared", 7, 0]


r = corrupt("dangling", dangling)
check("a keras_history naming a missing node names its config path",
      r.returncode == 1 and "config.layers[6].inbound_nodes[0]" in r.stderr, r.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
