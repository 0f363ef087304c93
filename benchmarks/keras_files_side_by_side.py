#!/usr/bin/env python3
"""Keras 3 files, eager beside Keras itself (issue 41's checkpoint goal:
a `.weights.h5` / `.keras` save and load within 1.2x of h5py + Keras on the
same model).

The model (as keras_files_benchmark.cc builds it): Input(784) ->
Dense(W, relu) -> Dense(W, relu) -> Dense(10), Adam with its slots built,
for W = 1024 (1.86 M parameters, 22 MB with Adam's m and v) and 4096 (20 M,
240 MB). Each round runs eager's Google Benchmark binary for one repetition
of every case, then times Keras's `model.save_weights`, `model.load_weights`,
`model.save` and `keras.models.load_model` on the same model in the same
directory; the table holds medians over the rounds of wall-clock ms and of
process CPU ms (eager's including its libhdf5 reading child), and
eager / Keras for each. On a loaded machine the CPU ratio is the one to read. Keras does not fsync its files; eager does (its writes are
crash-safe: temporary file, fsync, rename).

  build/tf-venv/bin/python benchmarks/keras_files_side_by_side.py \\
      --eager build/benchmarks/keras_files_benchmark --rounds 5
"""

import argparse
import json
import os
import statistics
import subprocess
import tempfile
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

CASES = ["SaveKerasWeights", "LoadKerasWeights", "SaveKerasModel", "LoadKerasModel"]


def eager_round(binary, tmpdir):
    env = dict(os.environ, EAGER_BENCH_TMPDIR=tmpdir)
    out = subprocess.run([binary, "--benchmark_format=json", "--benchmark_min_time=0.01"],
                         capture_output=True, text=True, env=env, check=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        name, width = b["run_name"].split("/")[0][3:], int(b["run_name"].split(":")[1].split("/")[0])
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6, "s": 1e3}[b["time_unit"]]
        rows[(name, width)] = (b["real_time"] * scale, b["process_cpu_ms"])
    return rows


def keras_models(widths):
    import keras
    import numpy as np
    models = {}
    for w in widths:
        model = keras.Sequential([keras.Input((784,)), keras.layers.Dense(w, activation="relu"),
                                  keras.layers.Dense(w, activation="relu"),
                                  keras.layers.Dense(10)])
        model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
        model.optimizer.build(model.trainable_variables)
        models[w] = model
    return models, keras


def timed(fn):
    start, cpu = time.perf_counter(), time.process_time()
    fn()
    return ((time.perf_counter() - start) * 1e3, (time.process_time() - cpu) * 1e3)


def keras_round(models, keras, tmpdir):
    rows = {}
    for w, model in models.items():
        wpath, mpath = f"{tmpdir}/k{w}.weights.h5", f"{tmpdir}/k{w}.keras"
        rows[("SaveKerasWeights", w)] = timed(lambda: model.save_weights(wpath, overwrite=True))
        rows[("LoadKerasWeights", w)] = timed(lambda: model.load_weights(wpath))
        rows[("SaveKerasModel", w)] = timed(lambda: model.save(mpath, overwrite=True))
        rows[("LoadKerasModel", w)] = timed(lambda: keras.models.load_model(mpath))
        for p in (wpath, mpath):
            os.remove(p)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--eager", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--tmpdir", default=None)
    args = ap.parse_args()
    tmpdir = tempfile.mkdtemp(dir=args.tmpdir)
    models, keras = keras_models([1024, 4096])
    eager, peer = {}, {}
    for r in range(args.rounds):
        for k, v in eager_round(args.eager, tmpdir).items():
            eager.setdefault(k, []).append(v)
        for k, v in keras_round(models, keras, tmpdir).items():
            peer.setdefault(k, []).append(v)
        print(f"round {r + 1}/{args.rounds} done, load {os.getloadavg()[0]:.1f}", flush=True)
    print(f"\n{args.rounds} rounds; medians of wall-clock ms (range) and of process CPU ms "
          "(eager's with its reading child, Keras's with all its threads)")
    print("| case | width | eager wall | Keras 3 wall | wall ratio | eager CPU | Keras CPU | "
          "CPU ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for case in CASES:
        for w in (1024, 4096):
            e = [x[0] for x in eager[(case, w)]]
            k = [x[0] for x in peer[(case, w)]]
            ec = statistics.median(x[1] for x in eager[(case, w)])
            kc = statistics.median(x[1] for x in peer[(case, w)])
            me, mk = statistics.median(e), statistics.median(k)
            print(f"| {case} | {w} | {me:.0f} ({min(e):.0f}-{max(e):.0f}) | "
                  f"{mk:.0f} ({min(k):.0f}-{max(k):.0f}) | {me / mk:.2f} | {ec:.0f} | {kc:.0f} | "
                  f"{ec / kc:.2f} |")


if __name__ == "__main__":
    main()
