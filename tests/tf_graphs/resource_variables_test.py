"""TF 2.21's TF1-style graph with resource variables, run and saved by eager.

  resource_variables_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

TF, with disable_eager_execution() (and its defaults otherwise: resource
variables, so VarHandleOp, ReadVariableOp, AssignVariableOp, and the
ResourceApply* training ops), builds a small MLP (ReLU hidden layer, mean
squared error) with a GradientDescentOptimizer train op and an AdamOptimizer
one, initializes it, loads seeded weights, runs 2 steps of each, and saves a
checkpoint with its .meta. eager's graph_run_driver imports that .meta (a
Saver from its resource VariableDefs, whose restore runs AssignVariableOps),
restores, runs the forward pass, then each train op once, and saves. They
must equal what TF's own Session gives for that 3rd step to
1e-6 * max(1, max|TF|) (MatMul and the gradient sums may add in another
order), and TF must restore eager's checkpoint to eager's values bit for bit.
"""

import os
import shutil
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1

# Undo tfgraph's TF1 settings: this test wants what disable_eager_execution()
# alone gives in TF 2.21.
tf1.enable_resource_variables()
tf1.enable_control_flow_v2()
tf1.disable_eager_execution()

TOL = 1e-6


def write_feeds(prefix, tensors):
    """tfgraph.write_bundle, run in a Session (eager execution is off)."""
    keys = sorted(tensors)
    with tf.Graph().as_default(), tf1.Session() as sess:
        sess.run(tf.raw_ops.SaveV2(prefix=prefix, tensor_names=keys,
                                   shape_and_slices=[""] * len(keys),
                                   tensors=[tf.constant(tensors[k]) for k in keys]))


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "model.ckpt")
    eager_prefix = os.path.join(work, "eager.ckpt")
    rng = np.random.RandomState(39)
    batch, features, hidden, units = 8, 4, 6, 3
    x_value = rng.randn(batch, features).astype(np.float32)
    y_value = rng.randn(batch, units).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [batch, features], name="x")
        y = tf1.placeholder(tf.float32, [batch, units], name="y")
        w1 = tf1.Variable(tf.zeros([features, hidden]), name="hidden/kernel")
        b1 = tf1.Variable(tf.zeros([hidden]), name="hidden/bias")
        w2 = tf1.Variable(tf.zeros([hidden, units]), name="out/kernel")
        b2 = tf1.Variable(tf.zeros([units]), name="out/bias")
        assert "Resource" in type(w1).__name__, type(w1)
        h = tf.nn.relu(tf.matmul(x, w1) + b1)
        logits = tf.identity(tf.matmul(h, w2) + b2, name="logits")
        loss = tf.reduce_mean(tf.square(logits - y), name="loss")
        train_gd = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train_gd")
        train_adam = tf1.train.AdamOptimizer(0.01).minimize(loss, name="train_adam")
        saver = tf1.train.Saver()
        variables = tf1.global_variables()
        # Snapshots made now are in the .meta: "hidden/kernel/Read/ReadVariableOp:0".
        reads = [v.value().name for v in variables]
        types = sorted({op.type for op in graph.get_operations()})
        print("variables:", " ".join(v.op.name for v in variables))
        print("op types:", " ".join(types))
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            for v in (w1, b1, w2, b2):
                v.load(rng.randn(*v.shape.as_list()).astype(np.float32) * 0.5, sess)
            feeds = {x: x_value, y: y_value}
            for _ in range(2):
                sess.run(train_gd, feeds)
                sess.run(train_adam, feeds)
            saver.save(sess, prefix)
            want_forward = sess.run({"logits:0": logits, "loss:0": loss}, feeds)
            sess.run(train_gd, feeds)
            want_gd = dict(zip(reads, sess.run(reads)))
            sess.run(train_adam, feeds)
            want_adam = dict(zip(reads, sess.run(reads)))
    write_feeds(os.path.join(work, "feeds"), {"x:0": x_value, "y:0": y_value})
    results = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"), [
        "run forward logits:0 loss:0 | x:0 y:0",
        "train gd 1 train_gd " + " ".join(reads) + " | x:0 y:0",
        "train adam 1 train_adam " + " ".join(reads) + " | x:0 y:0",
        f"save saved {eager_prefix}",
    ], os.path.join(work, "eager_out"))
    tally = Tally()
    for line, want in (("forward", want_forward), ("gd", want_gd), ("adam", want_adam)):
        got = results.get(line, {})
        if ".error" in got:
            tally.check(f"eager runs '{line}'", got[".error"])
            continue
        worst = 0.0
        for name, value in want.items():
            tally.check(f"{line}: {name}", mismatch(name, got[name], value, TOL))
            worst = max(worst, float(np.max(np.abs(got[name] - value))))
        print(f"{line}: max |eager - TF| = {worst:.3g} over {len(want)} tensors", flush=True)
    if ".error" in results.get("saved", {}):
        tally.check("eager saves", results["saved"][".error"])
    else:
        # TF restores eager's checkpoint into its own graph.
        with graph.as_default(), tf1.Session(graph=graph) as sess:
            saver.restore(sess, eager_prefix)
            restored = dict(zip(reads, sess.run(reads)))
        # Bit for bit what eager had after its Adam step (which equals TF's to TOL).
        for name, value in results.get("adam", {}).items():
            if name in restored:
                tally.check(f"TF restores eager's {name}", mismatch(name, restored[name], value, 0))
        keys = set(tf.train.load_checkpoint(eager_prefix).get_variable_to_shape_map())
        want_keys = set(tf.train.load_checkpoint(prefix).get_variable_to_shape_map())
        tally.check("eager's checkpoint keys are TF's",
                    None if keys == want_keys else f"{sorted(keys)} != {sorted(want_keys)}")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
