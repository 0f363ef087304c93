#!/usr/bin/env python3
"""TF 2 SavedModels TensorFlow 2.21 writes, run by eager (LoadSavedModel and
a signature's Run: benchmarks/saved_model_benchmark) and by TF 2.21
(tf.saved_model.load(dir).signatures[key]): same files, same inputs (element
i of the input is ((i * 7919) mod 1000) / 1000 - 0.5), same thread counts
(eager's SetNumThreads; TF's intra- and inter-op pools, one TF process per
count), batch 1 and batch 64.

The models, written into a temporary directory by Keras 3's model.export():
  mlp   784-256-128-10, ReLU
  cnn   28x28x1: conv3x3x32-BN-relu-maxpool-conv3x3x64-BN-relu-GAP-dense10
        (the BN's moving statistics and gamma/beta set to values other than
        their initial ones, so the normalization matters). Keras 3 writes
        its BatchNormalization as Rsqrt, Mul, Sub and AddV2 nodes
        (tf.nn.batch_normalization), not FusedBatchNormV3;
  cnn_tfk  the same CNN in tf_keras (Keras 2, TF 2.21's), exported by its
        model.export(): FusedBatchNormV3 nodes, which eager's Session folds
        into the convolutions (ops/internal/graph_fusion.h)
and tf.saved_model.save of a tf.function of scalars x, c, d: chain1 is x + c,
chain201 is x + c, then 100 times (- d, + c): 201 cheap nodes that TF's
grappler cannot fold (c, d are inputs, and Sub between the AddV2s leaves no
chain of adds to rewrite). The per-node overhead is (chain201 - chain1) /
200 of the p50 per call.

Both signatures of a Keras export are timed ("serving_default" and "serve").
Before timing, each side's output on the timed input is compared with the
other's (float32 tolerance). Per cell: the median over rounds of each side's
p50 per call (1,000 timed calls at batch 1, 200 at batch 64) and of its
p99, eager's p50 over TF's, the ratio of the process CPU time per call
(all threads; what to read on a loaded machine), and batch 64 as examples
per second. The rounds
alternate the sides, so that load hits both about equally.

  build/tf-venv/bin/python benchmarks/saved_model_side_by_side.py \\
      --eager build/benchmarks/saved_model_benchmark --rounds 3 [--baseline OLD_BINARY]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

KERAS_MODELS = {"mlp": (784,), "cnn": (28, 28, 1), "cnn_tfk": (28, 28, 1)}
SIGNATURES = ("serving_default", "serve")
CALLS = {1: 1000, 64: 200}
CHAIN_PAIRS = 100


def inputs(shape):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    return (((i * 7919) % 1000).astype(np.float32) / np.float32(1000) - np.float32(0.5)).reshape(
        shape)


def chain_feeds():
    return {"x": np.float32(0.25), "c": np.float32(0.5), "d": np.float32(0.375)}


def cnn(keras):
    """The CNN in `keras` (Keras 3 or tf_keras), its BN statistics set."""
    keras.utils.set_random_seed(41)
    x = keras.Input(KERAS_MODELS["cnn"], name="x")
    h = keras.layers.Conv2D(32, 3)(x)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU()(h)
    h = keras.layers.MaxPooling2D()(h)
    h = keras.layers.Conv2D(64, 3)(h)
    h = keras.layers.BatchNormalization()(h)
    h = keras.layers.ReLU()(h)
    h = keras.layers.GlobalAveragePooling2D()(h)
    model = keras.Model(x, keras.layers.Dense(10)(h))
    rng = np.random.default_rng(41)
    for layer in model.layers:
        if isinstance(layer, keras.layers.BatchNormalization):
            c = layer.gamma.shape[0]
            layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype(np.float32))
            layer.beta.assign(rng.uniform(-0.2, 0.2, c).astype(np.float32))
            layer.moving_mean.assign(rng.uniform(-0.1, 0.1, c).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.5, 2.0, c).astype(np.float32))
    return model


def export_models(root):
    """Writes mlp/, cnn/, chain1/ and chain201/ under root (in this process)."""
    import keras  # pylint: disable=import-outside-toplevel
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    keras.utils.set_random_seed(41)
    x = keras.Input(KERAS_MODELS["mlp"], name="x")
    h = keras.layers.Dense(256, activation="relu")(x)
    h = keras.layers.Dense(128, activation="relu")(h)
    keras.Model(x, keras.layers.Dense(10)(h)).export(os.path.join(root, "mlp"), verbose=False)

    cnn(keras).export(os.path.join(root, "cnn"), verbose=False)
    import tf_keras  # pylint: disable=import-outside-toplevel
    cnn(tf_keras).export(os.path.join(root, "cnn_tfk"))

    spec = tf.TensorSpec([], tf.float32)
    for pairs in (0, CHAIN_PAIRS):

        def chain(x, c, d, pairs=pairs):
            y = x + c
            for _ in range(pairs):
                y = (y - d) + c
            return {"output_0": y}

        module = tf.Module()
        module.f = tf.function(chain, input_signature=[spec, spec, spec])
        tf.saved_model.save(module, os.path.join(root, f"chain{1 + 2 * pairs}"),
                            signatures={"serving_default": module.f})


def cases():
    out = []
    for model in KERAS_MODELS:
        for sig in SIGNATURES:
            for batch in (1, 64):
                out.append((model, sig, batch))
    out += [("chain1", "serving_default", 1), ("chain201", "serving_default", 1)]
    return out


def tf_side(root, threads, check_dir):
    """In a child process with `threads`: {case: (p50, p99)} as JSON on stdout."""
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    tf.config.threading.set_inter_op_parallelism_threads(threads)
    loaded = {m: tf.saved_model.load(os.path.join(root, m))
              for m in list(KERAS_MODELS) + ["chain1", "chain201"]}
    result = {}
    for model, sig, batch in cases():
        fn = loaded[model].signatures[sig]
        if model.startswith("chain"):
            feeds = {k: tf.constant(v) for k, v in chain_feeds().items()}
        else:
            feeds = {"x": tf.constant(inputs((batch,) + KERAS_MODELS[model]))}
        for _ in range(3):
            y = fn(**feeds)
        if check_dir:
            np.asarray(y["output_0"], np.float32).tofile(
                os.path.join(check_dir, f"tf_{model}_{sig}_b{batch}.f32"))
        us = []
        cpu_start = time.process_time()
        for _ in range(CALLS[batch]):
            start = time.perf_counter()
            fn(**feeds)
            us.append((time.perf_counter() - start) * 1e6)
        cpu_us = (time.process_time() - cpu_start) * 1e6 / CALLS[batch]
        us.sort()
        result[f"{model}/{sig}/{batch}"] = (us[len(us) // 2], us[int(0.99 * (len(us) - 1))],
                                            cpu_us)
    print(json.dumps(result))


def tf_cells(root, threads, check_dir=None):
    cmd = [sys.executable, __file__, "--tf-child", root, "--threads", str(threads)]
    if check_dir:
        cmd += ["--check-dir", check_dir]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return {(k.split("/")[0], k.split("/")[1], int(k.split("/")[2]), threads): tuple(v)
            for k, v in json.loads(out.splitlines()[-1]).items()}


def eager_cells(binary, root, check_dir=None, fusion=True):
    env = dict(os.environ, EAGER_SAVED_MODEL_DIR=root)
    if check_dir:
        env["EAGER_SAVED_MODEL_OUT"] = check_dir
    if not fusion:
        env["EAGER_GRAPH_FUSION"] = "0"
    out = subprocess.run([binary, "--benchmark_format=json"], capture_output=True, text=True,
                         env=env, check=True).stdout
    cells = {}
    for b in json.loads(out)["benchmarks"]:
        m = re.match(r"BM_SavedModel/(\w+)/(\w+)/batch:(\d+)/threads:(\d+)", b["name"])
        if m:
            cpu_us = b["cpu_time"] * {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b["time_unit"]]
            cells[(m[1], m[2], int(m[3]), int(m[4]))] = (b["p50_us"], b["p99_us"], cpu_us,
                                                         b.get("fused", 0))
    return cells


def check_outputs(binary, root, fusion):
    with tempfile.TemporaryDirectory() as check_dir:
        tf_cells(root, 1, check_dir)
        eager_cells(binary, root, check_dir, fusion)
        for model, sig, batch in cases():
            name = f"{model}_{sig}_b{batch}.f32"
            want = np.fromfile(os.path.join(check_dir, "tf_" + name), np.float32)
            got = np.fromfile(os.path.join(check_dir, name), np.float32)
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4, atol=1e-5):
                raise SystemExit(f"{name}: eager and TF disagree (max abs diff "
                                 f"{np.max(np.abs(got - want)) if got.shape == want.shape else '-'})")
        print(f"outputs agree (rtol 1e-4, atol 1e-5) for {len(cases())} cases", file=sys.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eager", help="the saved_model_benchmark binary")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-fusion", action="store_true", help="eager with EAGER_GRAPH_FUSION=0")
    parser.add_argument("--baseline", help="another saved_model_benchmark binary (eager before a "
                        "change), timed in the same rounds")
    parser.add_argument("--tf-child", help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--check-dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if args.tf_child:
        tf_side(args.tf_child, args.threads, args.check_dir)
        return 0
    if not args.eager:
        parser.error("--eager is required")

    with tempfile.TemporaryDirectory() as root:
        subprocess.run([sys.executable, "-c",
                        f"import sys; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
                        f"import saved_model_side_by_side as s; s.export_models({root!r})"],
                       check=True, capture_output=True)
        check_outputs(args.eager, root, not args.no_fusion)
        eager_runs, tf_runs, base_runs = [], [], []
        for r in range(args.rounds):
            eager_runs.append(eager_cells(args.eager, root, fusion=not args.no_fusion))
            if args.baseline:
                base_runs.append(eager_cells(args.baseline, root, fusion=not args.no_fusion))
            tf_run = {}
            for threads in (1, 2):
                tf_run.update(tf_cells(root, threads))
            tf_runs.append(tf_run)
            print(f"round {r + 1}/{args.rounds} done (load {os.getloadavg()[0]:.1f})",
                  file=sys.stderr)

    base_head = " baseline p50 us | eager / baseline |" if args.baseline else ""
    print("| model | signature | batch | threads | eager p50 (p99) us | TF p50 (p99) us "
          "| eager / TF p50 | eager / TF CPU per call | eager / TF examples/s | fused nodes |"
          + base_head)
    print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if args.baseline else ""))
    med = {}
    for model, sig, batch in cases():
        for threads in (1, 2):
            c = (model, sig, batch, threads)
            e50 = statistics.median(run[c][0] for run in eager_runs)
            e99 = statistics.median(run[c][1] for run in eager_runs)
            t50 = statistics.median(run[c][0] for run in tf_runs)
            t99 = statistics.median(run[c][1] for run in tf_runs)
            ecpu = statistics.median(run[c][2] for run in eager_runs)
            tcpu = statistics.median(run[c][2] for run in tf_runs)
            med[c] = (e50, t50)
            rate = f"{batch / e50 * 1e6:.0f} / {batch / t50 * 1e6:.0f}" if batch > 1 else "-"
            fused = int(eager_runs[-1][c][3])
            base = ""
            if args.baseline:
                b50 = statistics.median(run[c][0] for run in base_runs)
                base = f" {b50:.1f} | {e50 / b50:.2f}x |"
            print(f"| {model} | {sig} | {batch} | {threads} | {e50:.1f} ({e99:.1f}) "
                  f"| {t50:.1f} ({t99:.1f}) | {e50 / t50:.2f}x | {ecpu / tcpu:.2f}x | {rate} | {fused} |"
                  f"{base}")
    nodes = 2 * CHAIN_PAIRS
    for threads in (1, 2):
        long_c = ("chain201", "serving_default", 1, threads)
        short_c = ("chain1", "serving_default", 1, threads)
        e = (med[long_c][0] - med[short_c][0]) / nodes
        t = (med[long_c][1] - med[short_c][1]) / nodes
        print(f"\nper-node overhead, {threads} thread(s): eager {e * 1000:.0f} ns, "
              f"TF {t * 1000:.0f} ns ({e / t:.2f}x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
