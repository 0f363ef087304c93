#!/usr/bin/env python3
"""The layer library's training steps (LSTM, GRU, Conv+BN+ReLU) of eager
and pip torch, in rounds (as cnn_side_by_side.py: one short repetition of
each peer per round, medians over the rounds, so that both see the same
load). Prints a Markdown table of median wall-clock ms/step, eager's time
over torch's, and, given --peak1/--peak2 (GFLOP/s), each one's share of the
FMA peak (layers_benchmark.cc's flop_per_iter; one-thread cells by CPU time).

  python3 benchmarks/layers_side_by_side.py --eager build/benchmarks/layers_benchmark \\
      --torch_python /tmp/torchvenv/bin/python --rounds 3 --peak1 117 --peak2 234
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

CASES = "LSTMStep|GRUStep|ConvBNReLUStep"


def env():
    e = dict(os.environ)
    for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        e.pop(k, None)
    return e


def eager_rows(binary, min_time, flops):
    out = subprocess.run([binary, f"--benchmark_filter={CASES}",
                          f"--benchmark_min_time={min_time}", "--benchmark_format=json"],
                         capture_output=True, text=True, env=env(), check=True).stdout
    rows = {}
    for b in json.loads(out)["benchmarks"]:
        m = re.match(r"BM_Eager(\w+)/(.*)", b["name"])
        if m:
            scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b["time_unit"]]
            case = re.sub(r"/real_time$", "", f"{m[1]}/{m[2]}")  # torch's names lack it
            rows[case] = (b["real_time"] * scale, b["cpu_time"] * scale)
            flops[case] = b.get("flop_per_iter", 0)
    return rows


def torch_rows(python, script, min_time):
    out = subprocess.run([python, script, "--reps", "1", "--min_time", str(min_time), "--filter",
                          "LSTM GRU ConvBNReLU"], capture_output=True, text=True, env=env(),
                         check=True).stdout
    rows = {}
    for line in out.splitlines():
        m = re.match(r"BM_PipTorch(\S+)(?: \[\S+\])?\s+median\s+([\d.]+) ms.*process CPU ([\d.]+) ms",
                     line)
        if m:
            wall, cpu = float(m[2]), float(m[3])
            if m[1] not in rows or wall < rows[m[1]][0]:  # torch's faster memory format
                rows[m[1]] = (wall, cpu)
    return rows


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--eager", required=True)
    p.add_argument("--torch_python", required=True)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--min_time", type=float, default=0.5)
    p.add_argument("--peak1", type=float, default=0)
    p.add_argument("--peak2", type=float, default=0)
    a = p.parse_args()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "torch_peer.py")
    flops = {}
    results = defaultdict(lambda: defaultdict(list))  # peer -> case -> [(wall, cpu)]
    for r in range(a.rounds):
        for case, v in eager_rows(a.eager, a.min_time, flops).items():
            results["eager"][case].append(v)
        for case, v in torch_rows(a.torch_python, script, a.min_time).items():
            results["torch"][case].append(v)
        print(f"round {r + 1}/{a.rounds} done", file=sys.stderr, flush=True)

    def cell(peer, case, threads):
        v = results[peer].get(case)
        if not v:
            return None, "-"
        wall = statistics.median(x[0] for x in v)
        cpu = statistics.median(x[1] for x in v)
        text = f"{wall:.1f} ({min(x[0] for x in v):.1f}-{max(x[0] for x in v):.1f})"
        peak = a.peak1 if threads == 1 else a.peak2
        if peak and flops.get(case):
            seconds = (cpu if threads == 1 else wall) * 1e-3
            text += f", {100 * flops[case] / seconds / 1e9 / peak:.0f}% of peak"
        return wall, text

    print(f"| training step, ms (median of {a.rounds} rounds) | eager | pip torch | eager / torch |")
    print("|---|---|---|---|")
    for case in sorted(results["eager"]):
        threads = int(re.search(r"threads:(\d+)", case)[1])
        e, e_text = cell("eager", case, threads)
        t, t_text = cell("torch", case, threads)
        ratio = f"{e / t:.2f}x" if e and t else "-"
        print(f"| {case} | {e_text} | {t_text} | {ratio} |")


if __name__ == "__main__":
    main()
