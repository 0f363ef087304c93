#!/usr/bin/env python3
"""TF1 graphs TensorFlow wrote (../shared/realdata), run by eager's Session
(benchmarks/graph_benchmark) and by TF 2.21's Session.run: same .meta, same
checkpoint, same inputs (element i of the input is ((i * 7919) mod 1000) /
1000 - 0.5), same thread counts (eager's SetNumThreads; TF's intra- and
inter-op pools), batch 1 and batch 64.

Per cell: the median over rounds of each side's p50 per call (1,000 timed
calls at batch 1, 200 at batch 64) and of its p99, and eager's p50 over
TF's. On a shared machine the rounds alternate the two sides, so that load
hits both about equally.

  EAGER_REALDATA_DIR=../shared/realdata build/tf-venv/bin/python \\
      benchmarks/graph_side_by_side.py --eager build/benchmarks/graph_benchmark --rounds 3
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

import numpy as np

# name: (checkpoint prefix under the realdata directory, input, per-example
# input shape, output, a bool placeholder fed False or None). As
# graph_benchmark.cc's kModels.
MODELS = {
    "lenet": ("tf1_saver_lenet_adam/lenet", "Placeholder:0", (32, 32, 1), "add_4:0", None),
    "elu_mlp": ("tf1_saver_handson_bn_partial_adam/dnn11_0_to_4.ckpt", "X:0", (784,),
                "dnn/y_prob:0", "dnn/training:0"),
}
CALLS = {1: 1000, 64: 200}


def inputs(shape):
    n = int(np.prod(shape))
    i = np.arange(n, dtype=np.int64)
    return (((i * 7919) % 1000).astype(np.float32) / np.float32(1000) - np.float32(0.5)).reshape(
        shape)


def tf_cell(tf, realdata, model, batch, threads):
    prefix, inp, dims, out, flag = MODELS[model]
    config = tf.compat.v1.ConfigProto(intra_op_parallelism_threads=threads,
                                      inter_op_parallelism_threads=threads)
    graph = tf.Graph()
    with graph.as_default():
        saver = tf.compat.v1.train.import_meta_graph(os.path.join(realdata, prefix + ".meta"),
                                                     clear_devices=True)
    with tf.compat.v1.Session(graph=graph, config=config) as sess:
        saver.restore(sess, os.path.join(realdata, prefix))
        feed = {inp: inputs((batch,) + dims)}
        if flag:
            feed[flag] = False
        for _ in range(3):
            sess.run(out, feed)
        us = []
        for _ in range(CALLS[batch]):
            start = time.perf_counter()
            sess.run(out, feed)
            us.append((time.perf_counter() - start) * 1e6)
    us.sort()
    return us[len(us) // 2], us[int(0.99 * (len(us) - 1))]


def eager_cells(binary, realdata):
    env = dict(os.environ, EAGER_REALDATA_DIR=realdata)
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=0.3"],
                         capture_output=True, text=True, env=env, check=True).stdout
    cells = {}
    for b in json.loads(out)["benchmarks"]:
        m = re.match(r"BM_Graph/(\w+)/batch:(\d+)/threads:(\d+)", b["name"])
        if m:
            cells[(m[1], int(m[2]), int(m[3]))] = (b["p50_us"], b["p99_us"], b.get("fused", 0))
    return cells


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eager", required=True, help="the graph_benchmark binary")
    parser.add_argument("--realdata", default=os.environ.get("EAGER_REALDATA_DIR",
                                                             "../shared/realdata"))
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import tensorflow as tf  # pylint: disable=import-outside-toplevel
    tf.compat.v1.disable_eager_execution()

    cells = [(m, b, t) for m in MODELS for b in (1, 64) for t in (1, 2)]
    eager_runs, tf_runs = [], []
    for r in range(args.rounds):
        eager_runs.append(eager_cells(args.eager, args.realdata))
        tf_runs.append({c: tf_cell(tf, args.realdata, *c) for c in cells})
        print(f"round {r + 1}/{args.rounds} done (load {os.getloadavg()[0]:.1f})", file=sys.stderr)

    print("| graph | batch | threads | eager p50 (p99) us | TF p50 (p99) us | eager / TF p50 "
          "| fused nodes |")
    print("|---|---|---|---|---|---|---|")
    for c in cells:
        e50 = statistics.median(run[c][0] for run in eager_runs)
        e99 = statistics.median(run[c][1] for run in eager_runs)
        t50 = statistics.median(run[c][0] for run in tf_runs)
        t99 = statistics.median(run[c][1] for run in tf_runs)
        fused = int(eager_runs[-1][c][2])
        print(f"| {c[0]} | {c[1]} | {c[2]} | {e50:.1f} ({e99:.1f}) | {t50:.1f} ({t99:.1f}) "
              f"| {e50 / t50:.2f}x | {fused} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
