"""Keras 3 (TF 2.21's tf.keras) judges eager's optimizers in .keras
(compile_config) and .weights.h5 (optimizer/vars) files (issue 40).

  keras_optimizer_files_test.py driver=build/tests/tf_keras/keras_optimizer_files_driver work=DIR

The model and optimizers are keras_optimizer_files_driver.cc's: SGD with
and without (Nesterov) momentum, RMSprop (momentum, centered), Adagrad,
Nadam, AdamW and Adam with amsgrad; and with learning-rate schedules
(ExponentialDecay, also staircase; PiecewiseConstantDecay; CosineDecay),
trained 3 steps before saving so that the next step's learning rate is the
schedule's at the restored iteration count (Keras 3 saves no learning_rate
variable then: optimizer/vars is iterations and the slots). Keras's files
with a schedule eager lacks (PolynomialDecay, CosineDecay with a warmup)
are errors naming it and its config path.

Keras -> eager: Keras compiles, takes a step and saves .keras and
  .weights.h5; eager's LoadKerasModel (optimizer from compile_config) and
  eager's own model with LoadKerasWeights take the next step and save;
  Keras's load_model / load_weights of those predict as Keras's own next
  step, and Keras's step after that from eager's .keras equals its own.
eager -> Keras: eager steps and saves; Keras's load_model (same optimizer
  class and arguments) and load_weights take the next step, equal to
  eager's next step.
The same both ways for an Embedding model on ids that repeat (EMBEDDED):
Keras 3 squares each looked-up row of the IndexedSlices gradient before a
repeated id's rows sum, so those optimizers' slots differ from the dense sum's.
Predictions agree to 1e-5 * max(1, max|Keras|).
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
O = keras.optimizers
args = dict(a.split("=", 1) for a in sys.argv[1:])
driver, work = args["driver"], args["work"]
passed = failed = 0

OPTIMIZERS = {
    "sgd": lambda: O.SGD(0.05),
    "sgd_m": lambda: O.SGD(0.05, momentum=0.9, nesterov=True),
    "rmsprop": lambda: O.RMSprop(0.01, momentum=0.5, centered=True),
    "adagrad": lambda: O.Adagrad(0.05),
    "nadam": lambda: O.Nadam(0.01),
    "adamw": lambda: O.AdamW(0.01, weight_decay=0.05),
    "adam_ams": lambda: O.Adam(0.01, amsgrad=True),
    "adam_exp": lambda: O.Adam(O.schedules.ExponentialDecay(0.05, 2, 0.5)),
    "sgd_pw": lambda: O.SGD(O.schedules.PiecewiseConstantDecay([1, 3], [0.1, 0.05, 0.01]),
                            momentum=0.9),
    "adam_cos": lambda: O.Adam(O.schedules.CosineDecay(0.05, 4, alpha=0.1)),
    "rms_exps": lambda: O.RMSprop(O.schedules.ExponentialDecay(0.02, 2, 0.5, staircase=True)),
}
SCHEDULED = {"adam_exp", "sgd_pw", "adam_cos", "rms_exps"}


def check(name, ok, detail=""):
    global passed, failed
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else ": " + detail))
    passed, failed = passed + ok, failed + (not ok)


def close(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return a.shape == b.shape and np.allclose(a, b, rtol=0,
                                              atol=1e-5 * max(1.0, np.abs(b).max()))


def ramp(rows, cols, step, mod, scale, shift):
    i = np.arange(rows * cols)
    return (((i * step) % mod) * scale + shift).astype(np.float32).reshape(rows, cols)


X, Y = ramp(4, 3, 7, 11, 0.1, -0.5), ramp(4, 2, 5, 3, 0.5, 0.0)


EMBEDDED = ["sgd_m", "rmsprop", "adagrad", "nadam", "adamw", "adam_ams"]
IDS = ((np.arange(24) * 7) % 5).astype(np.int32).reshape(4, 6)


def make(opt, embed=False):
    if embed:
        m = keras.Sequential([keras.Input((6,), dtype="int32"), keras.layers.Embedding(5, 3),
                              keras.layers.Flatten(), keras.layers.Dense(2)])
        m.compile(optimizer=OPTIMIZERS[opt](), loss="mse")
        return m
    m = keras.Sequential([keras.Input((3,)), keras.layers.Dense(4, activation="tanh"),
                          keras.layers.Dense(2)])
    m.compile(optimizer=OPTIMIZERS[opt](), loss="mse")
    return m


def run(*a):
    r = subprocess.run([driver, *a], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"driver {a} failed: {r.stderr}")
    return [np.array([float(v) for v in line.split()], np.float32).reshape(4, 2)
            for line in r.stdout.splitlines()]


def fresh(name):
    d = os.path.join(work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def predict(m):
    return m.predict(X, verbose=0)


for opt in OPTIMIZERS:
    # Keras -> eager
    d = fresh(opt + "_k2e")
    k = make(opt)
    trained = 3 if opt in SCHEDULED else 1  # Keras's steps before saving
    for _ in range(trained):
        k.train_on_batch(X, Y)
    if opt in SCHEDULED:
        check(f"{opt}: Keras 3 keeps no learning_rate variable with a schedule",
              all("learning_rate" not in v.path for v in k.optimizer.variables),
              str([v.path for v in k.optimizer.variables]))
    k.save(os.path.join(d, "keras.keras"))
    k.save_weights(os.path.join(d, "keras.weights.h5"))
    got = run("k2e", opt, d)
    k.train_on_batch(X, Y)
    want2 = predict(k)
    check(f"{opt}: eager's step from Keras's .keras equals Keras's step {trained + 1}",
          close(got[0], want2))
    check(f"{opt}: eager's step after LoadKerasWeights equals Keras's step {trained + 1}",
          close(got[1], want2))
    ks = keras.models.load_model(os.path.join(d, "eager_step.keras"))
    # The names differ (Keras numbers its own: "sgd_3"); every argument agrees.
    check(f"{opt}: Keras loads eager's .keras with the same optimizer class and arguments",
          type(ks.optimizer) is type(k.optimizer) and
          {a: b for a, b in ks.optimizer.get_config().items() if a != "name"} ==
          {a: b for a, b in k.optimizer.get_config().items() if a != "name"},
          f"{ks.optimizer.get_config()} vs {k.optimizer.get_config()}")
    check(f"{opt}: eager's .keras holds Keras's optimizer variables after the step",
          len(ks.optimizer.variables) == len(k.optimizer.variables) and all(
              close(a.numpy(), b.numpy())
              for a, b in zip(ks.optimizer.variables, k.optimizer.variables)))
    kw = make(opt)
    kw.optimizer.build(kw.trainable_variables)
    kw.load_weights(os.path.join(d, "eager_step.weights.h5"))
    ks.train_on_batch(X, Y)
    kw.train_on_batch(X, Y)
    k.train_on_batch(X, Y)
    want3 = predict(k)
    check(f"{opt}: Keras's step {trained + 2} from eager's .keras equals its own",
          close(predict(ks), want3))
    check(f"{opt}: Keras's step {trained + 2} from eager's .weights.h5 equals its own",
          close(predict(kw), want3))

    # eager -> Keras
    d = fresh(opt + "_e2k")
    got = run("e2k", opt, d)
    km = keras.models.load_model(os.path.join(d, "eager.keras"))
    kw = make(opt)
    kw.optimizer.build(kw.trainable_variables)
    kw.load_weights(os.path.join(d, "eager.weights.h5"))
    check(f"{opt}: Keras's load_model / load_weights of eager's files predict as eager",
          close(got[0], predict(km)) and close(got[0], predict(kw)))
    km.train_on_batch(X, Y)
    kw.train_on_batch(X, Y)
    check(f"{opt}: Keras's next step from eager's .keras equals eager's", close(got[1], predict(km)))
    check(f"{opt}: Keras's next step from eager's .weights.h5 equals eager's",
          close(got[1], predict(kw)))

for opt in EMBEDDED:
    # Keras -> eager: eager's next step equals Keras's.
    d = fresh(opt + "_k2e_embed")
    k = make(opt, embed=True)
    k.train_on_batch(IDS, Y)
    k.save(os.path.join(d, "keras.keras"))
    k.save_weights(os.path.join(d, "keras.weights.h5"))
    got = run("k2e_embed", opt, d)
    k.train_on_batch(IDS, Y)
    want2 = k.predict(IDS, verbose=0)
    check(f"{opt}, repeated ids: eager's step from Keras's .keras equals Keras's step 2",
          close(got[0], want2))
    check(f"{opt}, repeated ids: eager's step after LoadKerasWeights equals Keras's step 2",
          close(got[1], want2))
    # eager -> Keras: Keras's next step from eager's state equals eager's.
    d = fresh(opt + "_e2k_embed")
    got = run("e2k_embed", opt, d)
    km = keras.models.load_model(os.path.join(d, "eager.keras"))
    km.train_on_batch(IDS, Y)
    check(f"{opt}, repeated ids: Keras's next step from eager's .keras equals eager's",
          close(got[1], km.predict(IDS, verbose=0)))

# Keras's own files with a schedule eager lacks: errors naming it and its
# config path.
WHERE = "config.compile_config.optimizer.config.learning_rate"
for name, schedule, want in [
        ("polynomial", O.schedules.PolynomialDecay(0.05, 4),
         [WHERE + ".class_name", "'PolynomialDecay'"]),
        ("warmup", O.schedules.CosineDecay(0.05, 4, warmup_target=0.1, warmup_steps=2),
         [WHERE + ".config.warmup_target"])]:
    d = fresh(name + "_k2e")
    m = make("sgd")
    m.compile(optimizer=O.Adam(schedule), loss="mse")
    m.train_on_batch(X, Y)
    m.save(os.path.join(d, "keras.keras"))
    r = subprocess.run([driver, "k2e", "adam_exp", d], capture_output=True, text=True)
    check(f"Keras's .keras with a {name} schedule: an error naming it and its config path",
          r.returncode == 1 and all(w in r.stderr for w in want), r.stderr)

print(f"{passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
