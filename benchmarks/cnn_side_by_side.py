#!/usr/bin/env python3
"""The CNN training step of eager, oneDNN used directly and pip torch, in rounds.

On a shared, loaded machine one long run of each peer sees different load;
running them in turns, one short repetition each per round, and taking
medians over the rounds keeps the ratios honest. Prints a Markdown table of
median wall-clock ms/step and, for one thread, median CPU ms/step (the
calling thread's for the Google Benchmark binaries, the process's for torch),
with shares of the FMA peak when --peak1/--peak2 (GFLOP/s) are given.

  python3 benchmarks/cnn_side_by_side.py --eager build/benchmarks/anchors_benchmark \\
      --dnnl /path/to/anchors/build/bench_dnnl --torch_python /tmp/torchvenv/bin/python \\
      --rounds 5 --peak1 269 --peak2 531
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict


def cnn_flop(batch):
    conv1 = 2.0 * 28 * 28 * 32 * 25 * 1
    forward = conv1 + 2.0 * 14 * 14 * 64 * 25 * 32 + 2.0 * 3136 * 1024 + 2.0 * 1024 * 10
    return batch * (3 * forward - conv1)


def env():
    e = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        e.pop(k, None)
    return e


def google_benchmark(binary, regex, min_time):
    out = subprocess.run([binary, f"--benchmark_filter={regex}", f"--benchmark_min_time={min_time}",
                          "--benchmark_format=json"], capture_output=True, text=True, env=env(),
                         check=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        m = re.match(r"BM_\w*?CNNStep/batch:(\d+)/threads:(\d+)", b["name"])
        if m:
            scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
            rows[(int(m[1]), int(m[2]))] = (b["real_time"] * scale, b["cpu_time"] * scale)
    return rows


def pip_torch(python, script, min_time):
    out = subprocess.run([python, script, "--reps", "1", "--min_time", str(min_time), "--filter",
                          "CNN"], capture_output=True, text=True, env=env(), check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"BM_PipTorchCNNStep/batch:(\d+)/threads:(\d+) \[(\S+)\]\s+median\s+([\d.]+) ms"
                     r".*process CPU ([\d.]+) ms", line)
        if m:
            key = (int(m[1]), int(m[2]))
            wall, cpu = float(m[4]), float(m[5])
            if key not in rows or wall < rows[key][0]:  # torch's faster memory format
                rows[key] = (wall, cpu)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--eager", required=True)
    p.add_argument("--dnnl")
    p.add_argument("--torch_python")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--min_time", type=float, default=0.5)
    p.add_argument("--peak1", type=float, default=0)
    p.add_argument("--peak2", type=float, default=0)
    a = p.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    peers = [("eager", lambda: google_benchmark(a.eager, "CNNStep", a.min_time))]
    if a.dnnl:
        peers.append(("oneDNN direct", lambda: google_benchmark(a.dnnl, "CNNStep", a.min_time)))
    if a.torch_python:
        peers.append(("pip torch", lambda: pip_torch(a.torch_python,
                                                     os.path.join(here, "torch_peer.py"),
                                                     a.min_time)))
    results = defaultdict(lambda: defaultdict(list))  # peer -> case -> [(wall, cpu)]
    for r in range(a.rounds):
        for name, run in peers:
            for case, v in run().items():
                results[name][case].append(v)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)
    names = [n for n, _ in peers]
    print("| CNN step, ms (median of %d rounds) | " % a.rounds + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for case in sorted(results["eager"]):
        batch, threads = case
        peak = a.peak1 if threads == 1 else a.peak2
        cells = []
        for n in names:
            v = results[n].get(case)
            if not v:
                cells.append("-")
                continue
            wall = statistics.median(x[0] for x in v)
            cell = f"{wall:.1f} ({min(x[0] for x in v):.1f}-{max(x[0] for x in v):.1f})"
            if threads == 1:
                cpu = statistics.median(x[1] for x in v)
                cell += f", CPU {cpu:.1f}"
                if peak:
                    cell += f" ({100 * cnn_flop(batch) / (cpu * 1e-3) / 1e9 / peak:.0f}% of peak)"
            elif peak:
                cell += f" ({100 * cnn_flop(batch) / (wall * 1e-3) / 1e9 / peak:.0f}% of peak)"
            cells.append(cell)
        print(f"| batch {batch}, {threads} thread{'s' if threads > 1 else ''} | " +
              " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
