"""TF's own TF1 training graph, trained by eager's Session.

  adam_training_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

TF builds a linear model with tf.compat.v1.train.AdamOptimizer(0.01).minimize
(reference variables, so TF's ApplyAdam, VariableV2 and slot variables
"W/Adam", "W/Adam_1", "beta1_power"), saves it after loading random weights,
and trains 5 steps on one fed batch. eager's graph_run_driver imports TF's
.meta, restores, runs TF's train op "Adam" 5 times with the same feeds, and
fetches every variable; they must equal TF's to 1e-6 * max(1, max|TF|)
(MatMul and the gradient sums may add in another order).

The loss is a squared error summed by MatMuls against ones, and minimize gets
grad_loss: its gradient graph then uses only ops eager implements (MatMul,
AddV2, Sub, Square, Mul, Sum, Reshape, Neg, ApplyAdam). A classifier's graph
(sparse softmax cross entropy, reduce_mean, bias_add) also needs Fill, Tile,
ExpandDims, ZerosLike and BiasAddGrad in its gradients; op_coverage_test.py
lists what eager lacks there.
"""

import os
import shutil
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1, write_bundle

STEPS = 5
TOL = 1e-6


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "model.ckpt")
    rng = np.random.RandomState(25)
    batch, features, units = 8, 5, 3
    x_value = rng.randn(batch, features).astype(np.float32)
    y_value = rng.randn(batch, units).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [batch, features], name="x")
        y = tf1.placeholder(tf.float32, [batch, units], name="y")
        w = tf1.Variable(tf.zeros([features, units]), name="W")
        b = tf1.Variable(tf.zeros([units]), name="b")
        err = tf.square(tf.matmul(x, w) + b - y)
        loss = tf.matmul(tf.matmul(tf.ones([1, batch]), err), tf.ones([units, 1]))
        train = tf1.train.AdamOptimizer(0.01).minimize(loss, grad_loss=tf.ones([1, 1]), name="Adam")
        saver = tf1.train.Saver()
        variables = tf1.global_variables()
        reads = [v.value().name for v in variables]  # "W/read:0", "W/Adam/read:0", ...
        print("train op:", train.name, "variables:", " ".join(v.op.name for v in variables))
        print("op types:", " ".join(sorted({op.type for op in graph.get_operations()})))
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            w.load(rng.randn(features, units).astype(np.float32) * 0.5, sess)
            b.load(rng.randn(units).astype(np.float32) * 0.1, sess)
            saver.save(sess, prefix)
            for _ in range(STEPS):
                sess.run(train, {x: x_value, y: y_value})
            want = dict(zip(reads, sess.run(reads)))
    write_bundle(os.path.join(work, "feeds"), {"x:0": x_value, "y:0": y_value})
    results = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"),
                         [f"train adam {STEPS} Adam " + " ".join(reads) + " | x:0 y:0"],
                         os.path.join(work, "eager_out"))
    tally = Tally()
    got = results["adam"]
    if ".error" in got:
        tally.check("eager trains TF's graph", got[".error"])
    else:
        for name in reads:
            tally.check(f"{name} after {STEPS} steps", mismatch(name, got[name], want[name], TOL))
    # The steps did something: the weights moved from the saved ones.
    saved = tf.train.load_checkpoint(prefix).get_tensor("W")
    tally.check("W moved", None if np.max(np.abs(want["W/read:0"] - saved)) > 1e-3
                else "TF's 5 steps left W unchanged")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
