"""eager -> TF: seeded random graphs built by eager, imported and run by TF.

  eager_to_tf_test.py driver=build/tests/tf_graphs/graph_build_driver work=DIR [seed=S] [count=N]

For each seed (printed), eager's graph_build_driver builds a random graph with
eager's graph-mode API, saves model.ckpt + model.ckpt.meta with eager's Saver
and writes what its Session computed for every recorded tensor. TF then
  - imports the .meta (tf.compat.v1.train.import_meta_graph), restores the
    checkpoint with the Saver it describes, and runs every recorded tensor
    from the same feeds (end to end), and
  - runs each op alone, its recorded inputs fed with eager's values.
Tolerances are random_graphs.py's (per op type), stated there.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

from random_graphs import DISCONTINUOUS, END_TO_END_TOL, TOL
from tfgraph import Tally, driver_arg, mismatch, read_bundle, tf, tf1

# Ops that only move, hold or feed values: exact.
STRUCTURAL = {"Const", "Placeholder", "VariableV2", "Identity", "Switch", "Merge"}


def lineage(op, memo):
    """(exact, checked) of an op's outputs, from the graph (see random_graphs.py)."""
    if op.name in memo:
        return memo[op.name]
    ins = [lineage(t.op, memo) for t in op.inputs]
    inputs_exact = all(e for e, _ in ins)
    exact = (op.type in STRUCTURAL or TOL.get(op.type) == 0) and inputs_exact
    checked = all(c for _, c in ins) and not (op.type in DISCONTINUOUS and not inputs_exact)
    memo[op.name] = (exact, checked)
    return memo[op.name]


def case(tally, driver, work, seed, covered):
    folder = os.path.join(work, f"seed{seed}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    what = f"seed {seed}"
    proc = subprocess.run([driver, str(seed), folder], capture_output=True, text=True)
    if proc.returncode != 0:
        tally.check(what, f"graph_build_driver failed: {proc.stderr.strip()}")
        return
    with open(os.path.join(folder, "fetches")) as f:
        names = f.read().split()
    feeds = read_bundle(os.path.join(folder, "feeds"))
    eager_values = read_bundle(os.path.join(folder, "eager"))
    graph = tf.Graph()
    with graph.as_default():
        try:
            saver = tf1.train.import_meta_graph(os.path.join(folder, "model.ckpt.meta"))
        except ValueError as e:  # TF rejects the file eager wrote
            tally.check(f"{what}: TF imports eager's .meta", str(e))
            return
        with tf1.Session(graph=graph) as sess:
            saver.restore(sess, os.path.join(folder, "model.ckpt"))
            tf_values = dict(zip(names, sess.run(names, feeds)))
            memo = {}
            for n in names:
                t = graph.get_tensor_by_name(n)
                covered.add(t.op.type)
                exact, checked = lineage(t.op, memo)
                if checked:
                    tally.check(f"{what} end to end {t.op.type}",
                                mismatch(n, eager_values[n], tf_values[n],
                                         0 if exact else END_TO_END_TOL))
                if t.op.type == "Merge":
                    continue  # one input is dead: checked end to end only
                alone = dict(feeds)
                alone.update({i.name: eager_values[i.name] for i in t.op.inputs
                              if i.name in eager_values})
                tally.check(f"{what} {t.op.type} alone",
                            mismatch(n, eager_values[n], sess.run(n, alone), TOL[t.op.type]))
    shutil.rmtree(folder)


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    first = int(args.get("seed", 2000))
    count = int(args.get("count", 40))
    print(f"eager-built graphs: seeds {first} .. {first + count - 1} "
          f"(rerun one with seed=S count=1)", flush=True)
    tally = Tally()
    covered = set()
    for seed in range(first, first + count):
        case(tally, driver, work, seed, covered)
    print("op types covered: " + " ".join(sorted(covered)))
    return tally.finish()


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
