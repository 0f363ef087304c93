"""Peak resident memory of the main job beside pip torch's equivalent (issue 30).

Runs `fashion_mnist` (eager) and benchmarks/fashion_mnist_torch.py (pip torch:
the same data, network, batch, Adam and EMA) in turns, each as a child
process, and reports each child's peak RSS (ru_maxrss from wait4), its wall
time and the examples/s it printed; medians over --rounds.

  python3 benchmarks/memory_side_by_side.py --eager build/examples/fashion_mnist \
      --torch_python /tmp/torchvenv/bin/python --model mlp --rounds 3
  python3 benchmarks/memory_side_by_side.py ... --model cnn --epochs 1

--epochs 0 (the default) runs each side with its own default (2 for the MLP,
3 for the CNN). The peak is reached in the first epoch and its evaluation
(benchmarks/memory_growth shows no growth after it), so --epochs 1 gives the
same peak in a third of the time.
"""

import argparse
import os
import re
import statistics
import subprocess
import sys
import time


def run(command, env):
    """(peak RSS in MiB, wall seconds, examples/s or None, output) of one child."""
    start = time.perf_counter()
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             env=dict(os.environ, **env))
    output = child.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({child.returncode}):\n{output}")
    speed = re.search(r"\(([0-9.]+) examples/s\)", output)
    return usage.ru_maxrss / 1024, seconds, float(speed.group(1)) if speed else None, output


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--eager", required=True, help="the fashion_mnist binary")
    parser.add_argument("--torch_python", required=True, help="a python with pip's torch")
    parser.add_argument("--model", default="mlp", choices=["mlp", "cnn"])
    parser.add_argument("--epochs", type=int, default=0)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fashion_mnist_torch.py")
    epochs = ["--epochs", str(args.epochs)] if args.epochs else []
    # pip torch with its best setting on a shared machine: libgomp's workers
    # sleep between parallel regions instead of spinning (benchmarks/README.md).
    sides = {
        "eager": ([args.eager, "--model", args.model] + epochs, {}),
        "pip torch": ([args.torch_python, script, "--model", args.model] + epochs,
                      {"OMP_WAIT_POLICY": "passive"}),
    }
    results = {name: [] for name in sides}
    for r in range(args.rounds):
        for name, (command, env) in sides.items():
            peak, seconds, speed, output = run(command, env)
            notes = re.findall(r"test accuracy: .*|RSS after import torch: [0-9.]+ MiB", output)
            print(f"round {r + 1} {name}: peak RSS {peak:.1f} MiB, {seconds:.1f} s, "
                  f"{speed} examples/s; {'; '.join(notes)}", flush=True)
            results[name].append((peak, seconds, speed))
    print(f"\n{args.model}, epochs {args.epochs or 'default'}, medians of {args.rounds} rounds:")
    for name, rows in results.items():
        peak = statistics.median(row[0] for row in rows)
        seconds = statistics.median(row[1] for row in rows)
        speeds = [row[2] for row in rows if row[2] is not None]
        speed = f"{statistics.median(speeds):.0f}" if speeds else "?"
        print(f"  {name:10s} peak RSS {peak:8.1f} MiB (range {min(r[0] for r in rows):.1f}-"
              f"{max(r[0] for r in rows):.1f}), {seconds:.1f} s, {speed} examples/s")


if __name__ == "__main__":
    main()
