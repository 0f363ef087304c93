"""Keras 3 and tf_keras 2.11+ optimizers against eager's (issue 38).

  keras_optimizers_test.py driver=build/tests/tf_keras/keras_optimizers_driver work=DIR

For each optimizer (SGD plain, with momentum, with Nesterov momentum;
RMSprop plain and centered with momentum; Adagrad; AdamW; Nadam; Adam with
amsgrad; Adam,
SGD and RMSprop with ExponentialDecay, PiecewiseConstantDecay and
CosineDecay learning rates, whose checkpoint edges differ by line) and each
Keras line
(Keras 3 `keras` against eager's "keras3" layout, tf_keras against
"keras2"), one Dense(10) on a fixed batch, mean sparse softmax cross
entropy, kernel from the same values, bias zero:
  TF -> eager: TF takes two steps and writes tf.train.Checkpoint(model,
    optimizer); eager restores it into a fresh model and optimizer, builds
    both (Optimizer::Build), and its restored slots equal TF's before any
    step; it takes step 3, asserts the restore consumed, and its kernel,
    bias, iterations and slots equal TF's step 3.
  eager -> TF: eager takes two steps and writes; TF restores into a built
    model and optimizer with assert_consumed(), holds TF's own two steps,
    and its step 3 equals TF's own step 3. eager's keys, dtypes and shapes
    are exactly TF's.
The "_f64" cases run under floatx float64 (a float64 model; Keras makes
the learning rate float64 too, which eager's floatx option matches).
Floats agree to 1e-6 * max(1, max|TF|); iterations exactly.
"""

import os
import shutil
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import keras  # noqa: E402
import tf_keras  # noqa: E402
from kerastest import Tally  # noqa: E402

TOL = 1e-6
LINES = [("keras3", keras), ("keras2", tf_keras)]
# name: (Keras class, kwargs, slot lists in Keras's attribute order and eager's slot names)
OPTIMIZERS = {
    "sgd_plain": ("SGD", dict(learning_rate=0.1), [("momentums", "momentum")]),
    "sgd_momentum": ("SGD", dict(learning_rate=0.1, momentum=0.9), [("momentums", "momentum")]),
    "sgd_nesterov": ("SGD", dict(learning_rate=0.1, momentum=0.9, nesterov=True),
                     [("momentums", "momentum")]),
    "rmsprop": ("RMSprop", dict(learning_rate=0.01), [("_velocities", "velocity")]),
    "rmsprop_centered": ("RMSprop", dict(learning_rate=0.01, momentum=0.5, centered=True),
                         [("_velocities", "velocity"), ("_momentums", "momentum"),
                          ("_average_gradients", "average_gradient")]),
    "adagrad": ("Adagrad", dict(learning_rate=0.1), [("_accumulators", "accumulator")]),
    "adamw": ("AdamW", dict(learning_rate=0.01, weight_decay=0.1),
              [("_momentums", "m"), ("_velocities", "v")]),
    "nadam": ("Nadam", dict(learning_rate=0.01), [("_momentums", "m"), ("_velocities", "v")]),
    "adam_amsgrad": ("Adam", dict(learning_rate=0.01, amsgrad=True),
                     [("_momentums", "m"), ("_velocities", "v"), ("_velocity_hats", "vhat")]),
    # Learning-rate schedules (kwargs "schedule": built from the line's module).
    "adam_expdecay": ("Adam", dict(schedule=lambda s: s.ExponentialDecay(0.1, 1, 0.5)),
                      [("_momentums", "m"), ("_velocities", "v")]),
    "sgd_piecewise": ("SGD", dict(momentum=0.9, schedule=lambda s: s.PiecewiseConstantDecay(
        [1, 2], [0.1, 0.05, 0.01])), [("momentums", "momentum")]),
    "rmsprop_cosine": ("RMSprop", dict(schedule=lambda s: s.CosineDecay(0.01, 4, alpha=0.1)),
                       [("_velocities", "velocity")]),
    # floatx float64: the model and the learning-rate variable are float64.
    "adam_f64": ("Adam", {}, [("_momentums", "m"), ("_velocities", "v")]),
    "rmsprop_f64": ("RMSprop", dict(learning_rate=0.01), [("_velocities", "velocity")]),
}


def compare(tally, what, got, want):
    for key in sorted(want):
        if key not in got:
            tally.check(f"{what}: {key}", "missing in eager's output")
            continue
        g, w = np.asarray(got[key]), np.asarray(want[key])
        if g.shape != w.shape:
            problem = f"shape {g.shape}, TF {w.shape}"
        elif w.dtype.kind == "i":
            problem = None if np.array_equal(g, w) else f"{g} != TF's {w}"
        else:
            scale = max(1.0, float(np.max(np.abs(w))))
            diff = float(np.max(np.abs(g.astype(np.float64) - w)))
            problem = None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g}"
        tally.check(f"{what}: {key}", problem)


def keys(prefix):
    dtypes = tf.train.load_checkpoint(prefix).get_variable_to_dtype_map()
    return sorted((k, tuple(s), dtypes[k].name) for k, s in tf.train.list_variables(prefix)
                  if k != "_CHECKPOINTABLE_OBJECT_GRAPH")


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")


def make(kmod, opt_name):
    cls, kwargs, _ = OPTIMIZERS[opt_name]

    class MyModel(kmod.Model):
        def __init__(self):
            super().__init__()
            self.dense = kmod.layers.Dense(10)

        def call(self, x):
            return self.dense(x)

    kwargs = dict(kwargs)
    if "schedule" in kwargs:
        kwargs["learning_rate"] = kwargs.pop("schedule")(kmod.optimizers.schedules)
    return MyModel(), getattr(kmod.optimizers, cls)(**kwargs)


def step(model, opt, x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(y, model(x)))
    variables = model.trainable_variables
    opt.apply_gradients(zip(tape.gradient(loss, variables), variables))


def state(model, opt, opt_name):
    out = {"kernel": model.dense.kernel.numpy(), "bias": model.dense.bias.numpy(),
           "iterations": np.int64(opt.iterations.numpy())}
    if getattr(opt, "_u_product", None) is not None:
        out["u_product"] = opt._u_product.numpy()
    for attr, slot in OPTIMIZERS[opt_name][2]:
        for i, what in enumerate(["kernel", "bias"]):  # built from [kernel, bias]
            items = getattr(opt, attr, [])
            if len(items) > i:
                out[f"{slot}/{what}"] = items[i].numpy()
    return out


def case(tally, driver, work, layout, kmod, opt_name, feeds, x, y, kernel0):
    f64 = opt_name.endswith("_f64")
    if f64:
        x, kernel0 = x.astype(np.float64), kernel0.astype(np.float64)
    floatx("float64" if f64 else "float32")
    try:
        case_in_floatx(tally, driver, work, layout, kmod, opt_name, feeds, x, y, kernel0)
    finally:
        floatx("float32")


def floatx(dtype):
    # Keras 3 caches its global dtype policy from floatx on first use.
    keras.backend.set_floatx(dtype)
    keras.config.set_dtype_policy(dtype)
    tf_keras.backend.set_floatx(dtype)


def case_in_floatx(tally, driver, work, layout, kmod, opt_name, feeds, x, y, kernel0):
    folder = os.path.join(work, f"{opt_name}_{layout}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    what = f"{opt_name} {layout}"
    model, opt = make(kmod, opt_name)
    model(x)
    model.dense.kernel.assign(kernel0)
    step(model, opt, x, y)
    step(model, opt, x, y)
    two = state(model, opt, opt_name)
    tf_ckpt = tf.train.Checkpoint(model=model, optimizer=opt).save(os.path.join(folder, "tf/ckpt"))
    step(model, opt, x, y)
    three = state(model, opt, opt_name)
    # TF's step 3 after restoring its own file: the reference for a resumed
    # step. It is TF's uninterrupted step 3 except for tf_keras's Nadam,
    # whose Python _u_product_counter restarts at 1 on build and makes it
    # multiply u_product once per variable until it catches up.
    model, opt = make(kmod, opt_name)
    model(x)
    opt.build(model.trainable_variables)
    tf.train.Checkpoint(model=model, optimizer=opt).restore(tf_ckpt).assert_consumed()
    step(model, opt, x, y)
    resumed = state(model, opt, opt_name)
    drift = {k: float(np.max(np.abs(resumed[k] - three[k]))) for k in three
             if np.asarray(three[k]).dtype.kind == "f"}
    if max(drift.values()) > 0:
        print(f"{what}: TF's own resumed step 3 differs from its uninterrupted one by up to "
              f"{max(drift.values()):.3g} (the reference here is the resumed one)", flush=True)
    three = resumed

    # TF -> eager.
    out = os.path.join(folder, "eager_resumed")
    try:
        run([driver, "resume", opt_name, layout, feeds, tf_ckpt, out])
        reader = tf.train.load_checkpoint(out)
        names = set(reader.get_variable_to_shape_map())
        got = {k: reader.get_tensor(k) for k in names if not k.startswith("restored/")}
        restored = {k[len("restored/"):]: reader.get_tensor(k) for k in names
                    if k.startswith("restored/")}
        compare(tally, f"{what}: eager's slots after restore and Build, before a step", restored,
                {k: v for k, v in two.items() if "/" in k})
        compare(tally, f"{what}: eager's step 3 from TF's checkpoint", got, three)
    except RuntimeError as e:
        tally.check(f"{what}: eager restores TF's checkpoint and steps", str(e)[:2000])

    # eager -> TF.
    try:
        run([driver, "save", opt_name, layout, feeds, os.path.join(folder, "eager")])
    except RuntimeError as e:
        tally.check(f"{what}: eager writes", str(e)[:2000])
        return
    eager_ckpt = os.path.join(folder, "eager/ckpt-1")
    model, opt = make(kmod, opt_name)
    model(x)
    opt.build(model.trainable_variables)
    try:
        tf.train.Checkpoint(model=model, optimizer=opt).restore(eager_ckpt).assert_consumed()
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", None)
        compare(tally, f"{what}: eager's two steps restored by TF", state(model, opt, opt_name),
                two)
        step(model, opt, x, y)
        compare(tally, f"{what}: TF's step 3 after eager's two", state(model, opt, opt_name),
                three)
    except (AssertionError, ValueError) as e:
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", str(e)[:2000])
    tally.check(f"{what}: eager's keys are TF's",
                None if keys(eager_ckpt) == keys(tf_ckpt) else
                f"eager {keys(eager_ckpt)}\nTF {keys(tf_ckpt)}")


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    driver, work = args["driver"], args["work"]
    os.makedirs(work, exist_ok=True)
    rng = np.random.RandomState(38)
    x = rng.randn(4, 3).astype(np.float32)
    y = np.array([1, 2, 3, 4], np.int32)
    kernel0 = (rng.rand(3, 10).astype(np.float32) - 0.5)
    feeds = os.path.join(work, "feeds")
    tf.raw_ops.SaveV2(prefix=feeds, tensor_names=["kernel0", "x", "y", "kernel0_64", "x64"],
                      shape_and_slices=[""] * 5,
                      tensors=[kernel0, x, y, kernel0.astype(np.float64), x.astype(np.float64)])
    print(f"TF {tf.__version__}, Keras {keras.__version__}, tf_keras {tf_keras.__version__}",
          flush=True)
    tally = Tally()
    for opt_name in OPTIMIZERS:
        for layout, kmod in LINES:
            case(tally, driver, work, layout, kmod, opt_name, feeds, x, y, kernel0)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
