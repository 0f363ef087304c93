"""TF 2.21's TF1-style graph with resource variables, run and saved by eager.

  resource_variables_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

TF, with disable_eager_execution() (and its defaults otherwise: resource
variables, so VarHandleOp, ReadVariableOp, AssignVariableOp and the
ResourceApply* training ops), builds a small MLP (ReLU hidden layer, mean
squared error) with six train ops: TF1's GradientDescent, Adam, Momentum and
RMSProp optimizers, and raw ResourceApplyAdagradV2 and (Nesterov)
ResourceApplyKerasMomentum updates, which no TF1 optimizer emits. It
initializes, loads seeded weights, runs 2 rounds of all six, and saves a
checkpoint with its .meta. eager's graph_run_driver imports that .meta (a
Saver from its resource VariableDefs, whose restore runs AssignVariableOps),
restores, runs the forward pass (and a ResourceGather and a VariableShape of
the hidden kernel), eager::Gradients of the loss with respect to the four
resource variables (through each ReadVariableOp to its VarHandleOp), then each train op once in the same order,
and saves. Every output and variable must equal what TF's own Session gives
for that 3rd round to 1e-6 * max(1, max|TF|) (MatMul and the gradient sums
may add in another order), and TF must restore eager's checkpoint to eager's
values bit for bit, under TF's keys.

Then eager's own graph-mode Minimize on the imported resource variables: TF
writes a like MLP with its loss only (no train op) whose hidden layer is a
tf.function reading its variables inside, with two tf.conds (StatelessIf,
one taking each branch, one variable read in one branch only) and a nested
tf.function call (a StatefulPartitionedCall with captured handles).
eager::Gradients of the loss through the call and the Ifs must equal
tf.gradients; then eager imports it
and adds its TF1 GradientDescent, Momentum and Adam Minimize (resource slots
and powers, ResourceApply* nodes), MINIMIZE_STEPS steps of each in turn; TF
adds its own three optimizers to that graph and runs them the same way.
The weights after each optimizer, and Adam's slots and powers (read under
TF's names: they are resource variables named as TF names them), must equal
TF's to 1e-6 * max(1, max|TF|).
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
MINIMIZE_STEPS = 3
MINIMIZERS = [("gd", "gd:0.1", lambda: tf1.train.GradientDescentOptimizer(0.1)),
              ("momentum", "momentum:0.05:0.9", lambda: tf1.train.MomentumOptimizer(0.05, 0.9)),
              ("adam", "adam:0.01", lambda: tf1.train.AdamOptimizer(0.01))]


def check_minimize(driver, work, rng, x_value, y_value, tally):
    """eager's Minimize on an imported graph's resource variables against TF's."""
    prefix = os.path.join(work, "loss_only.ckpt")
    graph = tf.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, x_value.shape, name="x")
        y = tf1.placeholder(tf.float32, y_value.shape, name="y")
        features, units = x_value.shape[1], y_value.shape[1]
        w1 = tf1.Variable(tf.zeros([features, 5]), name="hidden/kernel")
        b1 = tf1.Variable(tf.zeros([5]), name="hidden/bias")
        w2 = tf1.Variable(tf.zeros([5, units]), name="out/kernel")

        # The hidden layer is a tf.function reading w1 and b1 inside (captured
        # handles) and calling a nested one: a StatefulPartitionedCall whose
        # gradient eager builds by inlining the function.
        @tf.function
        def activation(z):
            return tf.nn.tanh(z)

        @tf.function
        def hidden(inputs):
            z = tf.matmul(inputs, w1)
            # Two tf.conds (StatelessIf): the first takes its else branch,
            # the only one reading b1; the second its then branch.
            z = tf.cond(tf.reduce_mean(z) > 100.0, lambda: z * 2.0, lambda: z + b1)
            return tf.cond(tf.reduce_mean(z) < 100.0, lambda: activation(z),
                           lambda: tf.nn.relu(z))

        h = hidden(x)
        loss = tf.reduce_mean(tf.square(tf.matmul(h, w2) - y), name="loss")
        call_types = {op.type for op in graph.get_operations()}
        assert "StatefulPartitionedCall" in call_types, call_types
        library = {f.signature.name: {n.op for n in f.node_def}
                   for f in graph.as_graph_def().library.function}
        assert any("StatelessIf" in ops or "If" in ops for ops in library.values()), library
        saver = tf1.train.Saver()
        params = [w1, b1, w2]
        # The .meta eager imports holds no gradient nor optimizer: written
        # now, since TF's gradient of a call rewrites the call node.
        tf1.train.export_meta_graph(prefix + ".meta")
        grad_names = [v.op.name for v in params]
        tf_grads = tf.gradients(loss, params)
        steps = {line: make().minimize(loss) for line, _, make in MINIMIZERS}
        # Each variable's snapshot, "<v>/Read/ReadVariableOp:0" (value() would add a read).
        reads = [v._graph_element.name for v in params]  # pylint: disable=protected-access
        adam_state = [v._graph_element.name for v in tf1.global_variables()  # pylint: disable=protected-access
                      if "Adam" in v.op.name or "power" in v.op.name]
        assert len(adam_state) == 8, adam_state
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            for v in params:
                v.load(rng.randn(*v.shape.as_list()).astype(np.float32) * 0.5, sess)
            saver.save(sess, prefix, write_meta_graph=False)
            want = {"grads": dict(zip(grad_names, sess.run(tf_grads, {x: x_value, y: y_value})))}
            feeds = {x: x_value, y: y_value}
            for line, _, _ in MINIMIZERS:
                for _ in range(MINIMIZE_STEPS):
                    sess.run(steps[line], feeds)
                fetch = reads + (adam_state if line == "adam" else [])
                want[line] = dict(zip(fetch, sess.run(fetch)))
    plan = ["grads grads loss:0 " + " ".join(want["grads"]) + " | x:0 y:0"]
    plan += [f"minimize {line} {spec} {MINIMIZE_STEPS} loss:0 " + " ".join(want[line])
             + " | x:0 y:0" for line, spec, _ in MINIMIZERS]
    results = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"), plan,
                         os.path.join(work, "eager_minimize"))
    for line, want_line in want.items():
        got = results.get(line, {})
        if ".error" in got:
            tally.check(f"eager's '{line}' through the call", got[".error"])
            continue
        worst = 0.0
        for name, value in want_line.items():
            tally.check(f"minimize {line}: {name}", mismatch(name, got.get(name), value, TOL))
            if name in got:
                worst = max(worst, float(np.max(np.abs(got[name] - value))))
        print(f"minimize {line}: max |eager - TF| = {worst:.3g} over {len(want_line)} tensors",
              flush=True)


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
        # Reads through the handle without ReadVariableOp: ResourceGather, VariableShape.
        gathered = tf.identity(w1.sparse_read([2, 0, 3]), name="gathered")
        vshape = tf.identity(tf.raw_ops.VariableShape(input=w1.handle), name="vshape")
        train_gd = tf1.train.GradientDescentOptimizer(0.1).minimize(loss, name="train_gd")
        train_adam = tf1.train.AdamOptimizer(0.01).minimize(loss, name="train_adam")
        train_momentum = tf1.train.MomentumOptimizer(0.05, 0.9).minimize(loss, name="train_momentum")
        train_rmsprop = tf1.train.RMSPropOptimizer(0.01, momentum=0.5).minimize(
            loss, name="train_rmsprop")
        # Two updates no TF1 optimizer emits (Keras's and AdagradV2), as raw ops.
        params = [w1, b1, w2, b2]
        grads = tf.gradients(loss, params)
        accums = [tf1.Variable(tf.fill(v.shape, 0.1), name=v.op.name + "/accum") for v in params]
        train_adagrad = tf.group(*[
            tf.raw_ops.ResourceApplyAdagradV2(var=v.handle, accum=a.handle, lr=0.05,
                                              epsilon=1e-7, grad=g)
            for v, a, g in zip(params, accums, grads)], name="train_adagrad")
        train_keras = tf.group(*[
            tf.raw_ops.ResourceApplyKerasMomentum(var=v.handle, accum=a.handle, lr=0.05, grad=g,
                                                  momentum=0.9, use_nesterov=True)
            for v, a, g in zip(params, accums, grads)], name="train_keras_momentum")
        grad_names = [v.op.name for v in params]
        tf_grads = dict(zip(grad_names, tf.gradients(loss, params)))
        train_ops = {"gd": train_gd, "adam": train_adam, "momentum": train_momentum,
                     "rmsprop": train_rmsprop, "adagrad": train_adagrad, "keras": train_keras}
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
                for op in train_ops.values():
                    sess.run(op, feeds)
            saver.save(sess, prefix)
            want = {"forward": sess.run({"logits:0": logits, "loss:0": loss,
                                         "gathered:0": gathered, "vshape:0": vshape}, feeds)}
            want["grads"] = sess.run(tf_grads, feeds)
            for line, op in train_ops.items():
                sess.run(op, feeds)
                want[line] = dict(zip(reads, sess.run(reads)))
    write_feeds(os.path.join(work, "feeds"), {"x:0": x_value, "y:0": y_value})
    plan = ["run forward logits:0 loss:0 gathered:0 vshape:0 | x:0 y:0"]
    plan.append("grads grads loss:0 " + " ".join(grad_names) + " | x:0 y:0")
    for line, op in train_ops.items():
        plan.append(f"train {line} 1 {op.name} " + " ".join(reads) + " | x:0 y:0")
    plan.append(f"save saved {eager_prefix}")
    results = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"), plan,
                         os.path.join(work, "eager_out"))
    tally = Tally()
    for line, want_line in want.items():
        got = results.get(line, {})
        if ".error" in got:
            tally.check(f"eager runs '{line}'", got[".error"])
            continue
        worst = 0.0
        for name, value in want_line.items():
            tally.check(f"{line}: {name}", mismatch(name, got[name], value, TOL))
            worst = max(worst, float(np.max(np.abs(got[name] - value))))
        print(f"{line}: max |eager - TF| = {worst:.3g} over {len(want_line)} tensors", flush=True)
    if ".error" in results.get("saved", {}):
        tally.check("eager saves", results["saved"][".error"])
    else:
        # TF restores eager's checkpoint into its own graph.
        with graph.as_default(), tf1.Session(graph=graph) as sess:
            saver.restore(sess, eager_prefix)
            restored = dict(zip(reads, sess.run(reads)))
        # Bit for bit what eager had after its last step (which equals TF's to TOL).
        for name, value in results.get("keras", {}).items():
            if name in restored:
                tally.check(f"TF restores eager's {name}", mismatch(name, restored[name], value, 0))
        keys = set(tf.train.load_checkpoint(eager_prefix).get_variable_to_shape_map())
        want_keys = set(tf.train.load_checkpoint(prefix).get_variable_to_shape_map())
        tally.check("eager's checkpoint keys are TF's",
                    None if keys == want_keys else f"{sorted(keys)} != {sorted(want_keys)}")
    check_minimize(driver, work, rng, x_value, y_value, tally)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
