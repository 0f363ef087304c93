"""TF -> eager: seeded random TF1 graphs, saved by TF, run by eager.

  tf_to_eager_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR [seed=S] [count=N]

For each graph (random_graphs.py, seeds S .. S+N-1, printed), TF saves
model.ckpt + model.ckpt.meta with tf.compat.v1.train.Saver and computes every
recorded tensor from the fed x and flag; eager's graph_run_driver imports the
.meta, restores, and
  - runs everything once from the same feeds (end to end), and
  - runs each op alone, its inputs fed with TF's values (per-op tolerance).
Tolerances are random_graphs.py's, stated there.
"""

import os
import shutil
import sys

import numpy as np

from random_graphs import END_TO_END_TOL, TOL, RandomGraph
from tfgraph import Tally, driver_arg, mismatch, run_driver, tf1, write_bundle


def case(tally, driver, work, seed, covered):
    g = RandomGraph(seed)
    covered.update(g.op_types)
    folder = os.path.join(work, f"seed{seed}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    prefix = os.path.join(folder, "model.ckpt")
    feeds = g.feeds()
    names = list(g.recorded)
    alone = [n for n in names if g.recorded[n].alone]
    with tf1.Session(graph=g.graph) as sess:
        sess.run(g.init)
        for v, value in g.variables:
            v.load(value, sess)
        g.saver.save(sess, prefix)
        input_names = sorted({i.name for n in alone for i in g.recorded[n].tensor.op.inputs
                              if i.op.type != "Const"})
        fetches = names + [i for i in input_names if i not in names]
        values = dict(zip(fetches, sess.run(fetches, {g.x: feeds["x:0"],
                                                      g.flag: feeds["flag:0"]})))
    feed_values = dict(feeds)
    feed_values.update({i: values[i] for i in input_names})
    write_bundle(os.path.join(folder, "feeds"), feed_values)
    plan = ["run all " + " ".join(names) + " | x:0 flag:0"]
    for k, n in enumerate(alone):
        ins = sorted({i.name for i in g.recorded[n].tensor.op.inputs if i.op.type != "Const"})
        plan.append(f"run op{k} {n} | " + " ".join(ins))
    results = run_driver(driver, prefix + ".meta", prefix, os.path.join(folder, "feeds"), plan,
                         os.path.join(folder, "eager_out"))
    what = f"seed {seed}"
    if ".error" in results.get("all", {}):
        tally.check(f"{what} end to end", results["all"][".error"])
    else:
        for n in names:
            r = g.recorded[n]
            if r.checked:
                tol = 0 if r.exact else END_TO_END_TOL
                tally.check(f"{what} end to end {r.tensor.op.type}",
                            mismatch(n, results["all"][n], values[n], tol))
    for k, n in enumerate(alone):
        got = results.get(f"op{k}", {})
        op_type = g.recorded[n].tensor.op.type
        if ".error" in got:
            tally.check(f"{what} {op_type} alone", got[".error"])
        else:
            tally.check(f"{what} {op_type} alone", mismatch(n, got[n], values[n], TOL[op_type]))
    shutil.rmtree(folder)


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    first = int(args.get("seed", 1000))
    count = int(args.get("count", 40))
    print(f"TF {tf1.__version__ if hasattr(tf1, '__version__') else ''}graphs: seeds {first} .. "
          f"{first + count - 1} (rerun one with seed=S count=1)", flush=True)
    tally = Tally()
    covered = set()
    for seed in range(first, first + count):
        case(tally, driver, work, seed, covered)
    print("op types covered: " + " ".join(sorted(covered)))
    missing = sorted(set(TOL) - covered)
    if missing:
        tally.check("coverage", "op types no graph used: " + " ".join(missing))
    return tally.finish()


if __name__ == "__main__":
    np.seterr(all="ignore")
    sys.exit(main())
