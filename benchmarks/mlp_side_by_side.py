#!/usr/bin/env python3
"""The MLP training step (784-256-128-10, Adam, softmax cross entropy) of eager,
libtorch on OpenBLAS, pip torch and the hand-written Eigen floor, in rounds.

As cnn_side_by_side.py: on a shared, loaded machine every peer runs one short
repetition per round, in turns, and the table holds medians over the rounds:
wall-clock ms/step (range) and, for one thread, CPU ms/step (the calling
thread's for the Google Benchmark binaries, the process's for pip torch),
and each peer's time over eager's. The peers come from ../shared/anchors
(built by its build.sh): `bench_torch` (Debian's libtorch 1.13, run on
OpenBLAS with libgomp and AVX-512 ATen kernels, the anchors README's honest
configuration), `bench_eigen` (one thread) and `bench_eigen_omp` (OpenMP).
OpenMP peers run with OMP_WAIT_POLICY=passive when --passive is given (their
best setting when the machine is oversubscribed).

  python3 benchmarks/mlp_side_by_side.py --eager build/benchmarks/anchors_benchmark \\
      --anchors /path/to/anchors/build --torch_python /tmp/torchvenv/bin/python --rounds 5
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

LIB = "/usr/lib/x86_64-linux-gnu"


def base_env(extra):
    e = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE", "OMP_NUM_THREADS", "OMP_WAIT_POLICY"):
        e.pop(k, None)
    e.update(extra)
    return e


def google_benchmark(binary, min_time, env):
    out = subprocess.run([binary, "--benchmark_filter=MLPStep", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], capture_output=True, text=True,
                         env=base_env(env), check=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        m = re.match(r"BM_\w*?MLPStep/batch:(\d+)/threads:(\d+)", b["name"])
        if m:
            scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
            rows[(int(m[1]), int(m[2]))] = (b["real_time"] * scale, b["cpu_time"] * scale)
    return rows


def pip_torch(python, script, min_time, env):
    out = subprocess.run([python, script, "--reps", "1", "--min_time", str(min_time), "--filter",
                          "MLP"], capture_output=True, text=True, env=base_env(env),
                         check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"BM_PipTorchMLPStep/batch:(\d+)/threads:(\d+)\s+median\s+([\d.]+) ms"
                     r".*process CPU ([\d.]+) ms", line)
        if m:
            rows[(int(m[1]), int(m[2]))] = (float(m[3]), float(m[4]))
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--eager", required=True, help="build/benchmarks/anchors_benchmark")
    p.add_argument("--anchors", help="the anchors' build directory (bench_torch, bench_eigen*)")
    p.add_argument("--torch_python", help="a python with pip's torch")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min_time", type=float, default=0.3)
    p.add_argument("--passive", action="store_true", help="OMP_WAIT_POLICY=passive for OpenMP peers")
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    omp = {"OMP_WAIT_POLICY": "passive"} if a.passive else {}
    peers = [("eager", lambda: google_benchmark(a.eager, a.min_time, {}))]
    if a.anchors:
        torch_env = dict(omp, LD_LIBRARY_PATH=f"{LIB}/openblas-openmp", ATEN_CPU_CAPABILITY="avx512")
        peers.append(("libtorch 1.13 + OpenBLAS", lambda: google_benchmark(
            os.path.join(a.anchors, "bench_torch"), a.min_time, torch_env)))
        peers.append(("hand Eigen", lambda: google_benchmark(
            os.path.join(a.anchors, "bench_eigen"), a.min_time, {})))
        peers.append(("Eigen + OpenMP", lambda: google_benchmark(
            os.path.join(a.anchors, "bench_eigen_omp"), a.min_time, omp)))
    if a.torch_python:
        peers.append(("pip torch", lambda: pip_torch(
            a.torch_python, os.path.join(here, "torch_peer.py"), a.min_time, omp)))
    results = defaultdict(lambda: defaultdict(list))  # peer -> case -> [(wall, cpu)]
    for r in range(a.rounds):
        for name, run in peers:
            for case, v in run().items():
                results[name][case].append(v)
        load = os.getloadavg()[0]
        print(f"round {r + 1}/{a.rounds} done, load {load:.1f}", file=sys.stderr, flush=True)
    names = [n for n, _ in peers]
    print(f"| MLP step, ms (median of {a.rounds} rounds; one thread: wall, CPU) | " +
          " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for case in sorted(results["eager"], key=lambda c: (c[1], c[0])):
        batch, threads = case
        mine = results["eager"][case]
        mine_key = statistics.median(x[1 if threads == 1 else 0] for x in mine)
        cells = []
        for n in names:
            v = results[n].get(case)
            if not v:
                cells.append("-")
                continue
            wall = statistics.median(x[0] for x in v)
            cell = f"{wall:.3f} ({min(x[0] for x in v):.3f}-{max(x[0] for x in v):.3f})"
            key = wall
            if threads == 1:
                key = statistics.median(x[1] for x in v)
                cell += f", CPU {key:.3f}"
            if n != "eager":
                cell += f"; eager / it {mine_key / key:.2f}"
            cells.append(cell)
        print(f"| batch {batch}, {threads} thread{'s' if threads > 1 else ''} | " +
              " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
