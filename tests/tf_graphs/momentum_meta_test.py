"""eager's TF1 Momentum training graph, imported and trained by TF.

  momentum_meta_test.py driver=build/tests/tf_graphs/momentum_build_driver work=DIR

For plain and Nesterov momentum: momentum_build_driver builds a linear model
on placeholders of unknown batch size with eager's SGD (tf1_compatible, so
TF1's MomentumOptimizer: ApplyMomentum nodes, slots "W/Momentum") Minimize,
saves the .meta and checkpoint with eager's Saver, then trains on batches of
4, 1 and 3 rows (the batch of one needs the gradient's broadcast axes from
BroadcastGradientArgs at run time). TF 2.21's
tf.compat.v1.train.import_meta_graph imports the .meta, restores the
checkpoint, runs eager's train op on the same batches, and must reach
eager's variables and slots to 1e-6 * max(1, max|TF|).
"""

import os
import shutil
import subprocess
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, read_bundle, tf, tf1, write_bundle

TOL = 1e-6
VARIABLES = ["W", "b", "W/Momentum", "b/Momentum"]


def case(driver, work, nesterov, tally):
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rng = np.random.RandomState(26 + nesterov)
    feeds = {}
    for i, rows in enumerate([4, 1, 3]):
        feeds[f"x{i}:0"] = rng.randn(rows, 3).astype(np.float32)
        feeds[f"y{i}:0"] = rng.randn(rows, 2).astype(np.float32)
    write_bundle(os.path.join(work, "feeds"), feeds)
    proc = subprocess.run([driver, work, str(nesterov)], capture_output=True, text=True)
    if proc.returncode != 0:
        tally.check(f"nesterov={nesterov}: eager builds and trains", proc.stderr.strip())
        return
    eager = read_bundle(os.path.join(work, "eager"))
    with open(os.path.join(work, "train_op")) as f:
        train_name = f.read().strip()
    prefix = os.path.join(work, "model.ckpt")
    graph = tf.Graph()
    with graph.as_default():
        saver = tf1.train.import_meta_graph(prefix + ".meta")
        types = {op.type for op in graph.get_operations()}
        tally.check(f"nesterov={nesterov}: the graph holds ApplyMomentum",
                    None if "ApplyMomentum" in types else f"op types {sorted(types)}")
        nesterov_attrs = {op.get_attr("use_nesterov") for op in graph.get_operations()
                          if op.type == "ApplyMomentum"}
        tally.check(f"nesterov={nesterov}: use_nesterov",
                    None if nesterov_attrs == {bool(nesterov)} else str(nesterov_attrs))
        train = graph.get_operation_by_name(train_name)
        x = graph.get_tensor_by_name("x:0")
        y = graph.get_tensor_by_name("y:0")
        with tf1.Session(graph=graph) as sess:
            saver.restore(sess, prefix)
            for i in range(3):
                sess.run(train, {x: feeds[f"x{i}:0"], y: feeds[f"y{i}:0"]})
            want = dict(zip(VARIABLES,
                            sess.run([graph.get_tensor_by_name(v + ":0") for v in VARIABLES])))
    for name in VARIABLES:
        tally.check(f"nesterov={nesterov}: {name} after 3 steps",
                    mismatch(name, eager[name], want[name], TOL))
    # The steps moved W from the saved values.
    saved = tf.train.load_checkpoint(prefix).get_tensor("W")
    tally.check(f"nesterov={nesterov}: W moved",
                None if np.max(np.abs(want["W"] - saved)) > 1e-3 else "W did not move")


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    tally = Tally()
    for nesterov in (0, 1):
        case(driver, os.path.join(work, f"nesterov{nesterov}"), nesterov, tally)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
