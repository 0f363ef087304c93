"""Convolution and pooling layers against TF 2.21's Keras, both ways.

  keras_conv_layers_test.py driver=build/tests/tf_keras/conv_layers_driver work=DIR

Each case is one layer configuration (Conv2D, Conv1D, DepthwiseConv2D,
SeparableConv2D, Conv2DTranspose, the pooling layers; conv_layers_driver.cc
builds the same in C++), in two flavors: Keras 3 (`keras`, eager's "keras3"
layout) and tf_keras (Keras 2, "keras2"); and a tf_keras Sequential CNN
(Conv2D, MaxPooling2D, DepthwiseConv2D, GlobalAveragePooling2D, Dense)
through eager's Sequential.

  TF -> eager: TF builds the layer on a fixed input, sets random weights
    (bias too), saves tf.train.Checkpoint(layer=layer) and its output; eager
    restores into a fresh layer (built by the call, restoring on creation),
    asserts the restore was consumed, and its output must match TF's.
  eager -> TF: eager builds its layer (its own seeded glorot kernel, the fed
    bias), saves tf.train.Checkpoint(layer=...) (Save: ckpt-1, with the
    save_counter, as TF's save()) and its output; TF restores
    into a built layer with assert_consumed() and its output must match
    eager's. eager's checkpoint keys, dtypes and shapes equal TF's own.
  The layer's default name is Keras's (conv2d, max_pooling2d, ...).

Outputs agree to 1e-5 * max(1, max|TF|) (float32; TF's oneDNN kernels add
in another order than eager's).
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

TOL = 1e-5
IMAGES, SEQUENCES = (2, 9, 8, 3), (2, 10, 3)

# name -> (input shape, the layer from a Keras module, its default name).
CASES = {
    "conv2d_same_s2_relu": (IMAGES, lambda L: L.Conv2D(4, (3, 3), strides=2, padding="same",
                                                         activation="relu"), "conv2d"),
    "conv2d_dilated_tanh": (IMAGES, lambda L: L.Conv2D(3, (3, 2), dilation_rate=(2, 1),
                                                         activation="tanh"), "conv2d"),
    "conv2d_no_bias": (IMAGES, lambda L: L.Conv2D(5, (1, 2), strides=(1, 2), use_bias=False),
                       "conv2d"),
    "conv1d_causal_dilated": (SEQUENCES, lambda L: L.Conv1D(5, 3, padding="causal",
                                                            dilation_rate=2), "conv1d"),
    "conv1d_same_s2": (SEQUENCES, lambda L: L.Conv1D(2, 4, strides=2, padding="same"),
                       "conv1d"),
    "depthwise_same_m2_relu": (IMAGES, lambda L: L.DepthwiseConv2D(
        (3, 2), strides=(2, 1), padding="same", depth_multiplier=2, activation="relu"),
        "depthwise_conv2d"),
    "depthwise_dilated": (IMAGES, lambda L: L.DepthwiseConv2D(2, dilation_rate=2),
                          "depthwise_conv2d"),
    "separable_same_m2_relu": (IMAGES, lambda L: L.SeparableConv2D(
        4, (3, 2), strides=(2, 1), padding="same", depth_multiplier=2, activation="relu"),
        "separable_conv2d"),
    "separable_dilated_no_bias": (IMAGES, lambda L: L.SeparableConv2D(
        3, 2, dilation_rate=2, use_bias=False), "separable_conv2d"),
    "conv2d_transpose_same_s2": (IMAGES, lambda L: L.Conv2DTranspose(
        4, 3, strides=2, padding="same", activation="relu"), "conv2d_transpose"),
    "conv2d_transpose_valid_s2x1": (IMAGES, lambda L: L.Conv2DTranspose(3, (3, 2), strides=(2, 1)),
                                    "conv2d_transpose"),
    "max_pooling2d_same": (IMAGES, lambda L: L.MaxPooling2D((3, 2), strides=(2, 1),
                                                            padding="same"), "max_pooling2d"),
    "average_pooling2d_same": (IMAGES, lambda L: L.AveragePooling2D((3, 2), strides=(2, 1),
                                                                    padding="same"),
                               "average_pooling2d"),
    "average_pooling2d_valid": (IMAGES, lambda L: L.AveragePooling2D((2, 2)),
                                "average_pooling2d"),
    "max_pooling1d": (SEQUENCES, lambda L: L.MaxPooling1D(3), "max_pooling1d"),
    "average_pooling1d_same": (SEQUENCES, lambda L: L.AveragePooling1D(3, strides=2,
                                                                       padding="same"),
                               "average_pooling1d"),
    "global_average_pooling2d": (IMAGES, lambda L: L.GlobalAveragePooling2D(),
                                 "global_average_pooling2d"),
    "global_max_pooling2d_keepdims": (IMAGES, lambda L: L.GlobalMaxPooling2D(keepdims=True),
                                      "global_max_pooling2d"),
    "global_average_pooling1d": (SEQUENCES, lambda L: L.GlobalAveragePooling1D(),
                                 "global_average_pooling1d"),
    "global_max_pooling1d": (SEQUENCES, lambda L: L.GlobalMaxPooling1D(),
                             "global_max_pooling1d"),
}
FLAVORS = [("keras3", keras), ("keras2", tf_keras)]
# A tf_keras Sequential of these layers (its layer-N / layer_with_weights-N
# edges; Keras 3's Sequential layout is not eager's yet, issue 38).
SEQUENTIAL = {"sequential_cnn": (IMAGES, lambda L: tf_keras.Sequential([
    L.Conv2D(4, 3, padding="same", activation="relu"), L.MaxPooling2D(),
    L.DepthwiseConv2D(2), L.GlobalAveragePooling2D(), L.Dense(3)]), "sequential")}


def close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape:
        return f"shape {got.shape}, TF {want.shape}"
    scale = max(1.0, float(np.max(np.abs(want))))
    diff = float(np.max(np.abs(got.astype(np.float64) - want)))
    return None if diff <= TOL * scale else f"max |eager - TF| = {diff:.3g} (scale {scale:.3g})"


def keys(prefix):
    reader = tf.train.load_checkpoint(prefix)
    dtypes = reader.get_variable_to_dtype_map()
    return sorted((k, tuple(s), dtypes[k].name) for k, s in tf.train.list_variables(prefix)
                  if k != "_CHECKPOINTABLE_OBJECT_GRAPH")


def run(args):
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        return proc.stderr.strip() or f"exit {proc.returncode}"
    print(proc.stdout.strip(), flush=True)
    return None


def save_bundle(prefix, tensors):
    names = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[tensors[n] for n in names])


def one_case(tally, driver, work, layout, kmod, case, rng):
    shape, make, default_name = {**CASES, **SEQUENTIAL}[case]
    what = f"{layout} {case}"
    folder = os.path.join(work, layout, case)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    x = rng.randn(*shape).astype(np.float32)
    layer = make(kmod.layers)
    layer(x)
    tally.check(f"{what}: Keras's default name",
                None if layer.name.startswith(default_name) else layer.name)
    weights = [(rng.rand(*w.shape).astype(np.float32) - 0.5) for w in layer.get_weights()]
    layer.set_weights(weights)
    biases = [w for w, v in zip(weights, layer.weights) if "bias" in v.name]
    bias = biases[0] if biases and case in CASES else np.zeros([1], np.float32)
    feeds = os.path.join(folder, "feeds")
    save_bundle(feeds, {"x": x, "bias": bias})
    tf_y = np.asarray(layer(x))
    tf_ckpt = tf.train.Checkpoint(layer=layer).save(os.path.join(folder, "tf/ckpt"))

    # TF -> eager.
    out = os.path.join(folder, "eager_restored")
    problem = run([driver, "restore", layout, case, feeds, tf_ckpt, out])
    tally.check(f"{what}: eager restores TF's checkpoint (AssertConsumed)", problem)
    if problem is None:
        tally.check(f"{what}: eager's output from TF's weights",
                    close(tf.train.load_checkpoint(out).get_tensor("y"), tf_y))

    # eager -> TF.
    out = os.path.join(folder, "eager_saved")
    problem = run([driver, "save", layout, case, feeds, os.path.join(folder, "eager/ckpt"), out])
    eager_ckpt = os.path.join(folder, "eager/ckpt-1")
    tally.check(f"{what}: eager saves", problem)
    if problem is not None:
        return
    tally.check(f"{what}: eager's keys are TF's",
                None if keys(eager_ckpt) == keys(tf_ckpt) else
                f"eager {keys(eager_ckpt)}\nTF {keys(tf_ckpt)}")
    fresh = make(kmod.layers)
    fresh(x)
    try:
        tf.train.Checkpoint(layer=fresh).restore(eager_ckpt).assert_consumed()
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", None)
    except (AssertionError, ValueError) as e:
        tally.check(f"{what}: TF restores eager's checkpoint, assert_consumed()", str(e)[:2000])
        return
    tally.check(f"{what}: TF's output from eager's weights",
                close(tf.train.load_checkpoint(out).get_tensor("y"), np.asarray(fresh(x))))


def main():
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    driver, work = args["driver"], args["work"]
    os.makedirs(work, exist_ok=True)
    print(f"TF {tf.__version__}, Keras {keras.__version__}, tf_keras {tf_keras.__version__}",
          flush=True)
    rng = np.random.RandomState(38)
    tally = Tally()
    for layout, kmod in FLAVORS:
        for case in CASES:
            one_case(tally, driver, work, layout, kmod, case, rng)
    for case in SEQUENTIAL:
        one_case(tally, driver, work, "keras2", tf_keras, case, rng)
    print(f"{tally.passed} passed, {tally.failed} failed")
    return 1 if tally.failed else 0


if __name__ == "__main__":
    sys.exit(main())
