"""TF1 while loops (control flow v1) made by TF 2.21, imported, restored and run by eager.

  v1_loops_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

TF builds in one tf.compat.v1 graph (control flow v2 and resource variables
off: Enter/Merge/Switch/LoopCond/NextIteration/Exit frames, RefEnter for a
variable assigned in a loop):
  counting   i = 0; while i < n: i += 1                      (n a placeholder)
  several    (i, s, p): s += x * i, p *= 1.5 while i < n      (three variables,
             float and int, an invariant x)
  nested     for i < 3: for j < i + 1: total += x * (i + j)   (a loop in a body)
  cond_body  while i < 10: s = cond(i % 2 == 0, s + i, s - 1)
  in_cond    cond(flag, lambda: while-loop sum of x, lambda: -1)  (a loop in a branch)
  assign     while i < 3: assign_add(v, x) then i += 1; v read after the loop
  read_var   while i < 4: s += w * i  (a variable read inside the body)
  grad_x     tf.gradients through y = tanh(y) * x three times: TF's gradient
             loop (StackV2/StackPushV2/StackPopV2, ControlTrigger)
  tensor_arrays  a loop writing x * i to a tf.TensorArray, then stack() and
             size(); a loop reading an unstack()ed TensorArray
  rnn        tf1.nn.dynamic_rnn with a BasicRNNCell(5) and with an LSTMCell(4)
             on a [2, 4, 3] batch: TensorArrayScatterV3/ReadV3/WriteV3/GatherV3
             in a v1 loop
and saves it. eager (graph_run_driver, one Session) runs the same fetches
with the same feeds; every fetch must equal TF's (integers exactly, floats
to 1e-6 of their scale: eager adds as TF's kernels do, but the check allows
for another summation order). The assign line runs after the others, so
that v's value after three iterations is compared, in the same order as TF.
"""

import os
import shutil
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf1.nn.rnn_cell needs tf-keras

import numpy as np  # noqa: E402

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1, write_bundle  # noqa: E402


def build():
    """The graph's fetches by short name."""
    t = {}
    n = tf1.placeholder_with_default(7, [], name="n")
    x = tf1.placeholder(tf.float32, [3], name="x")
    flag = tf1.placeholder_with_default(True, [], name="flag")
    t["counting"] = tf1.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)],
                                   name="counting")

    def several_body(i, s, p):
        return i + 1, s + x * tf.cast(i, tf.float32), p * 1.5

    i, s, p = tf1.while_loop(lambda i, s, p: i < n, several_body,
                             [tf.constant(0), tf.zeros([3]), tf.constant(1.0)], name="several")
    t["several_i"], t["several_s"], t["several_p"] = i, s, p

    def outer_body(i, total):
        def inner_body(j, acc):
            return j + 1, acc + x * tf.cast(i + j, tf.float32)
        _, total = tf1.while_loop(lambda j, acc: j < i + 1, inner_body, [tf.constant(0), total],
                                  name="inner")
        return i + 1, total

    _, t["nested"] = tf1.while_loop(lambda i, total: i < 3, outer_body,
                                    [tf.constant(0), tf.zeros([3])], name="nested")

    def cond_body(i, s):
        s = tf1.cond(tf.equal(i % 2, 0), lambda: s + tf.cast(i, tf.float32), lambda: s - 1.0)
        return i + 1, s

    _, t["cond_body"] = tf1.while_loop(lambda i, s: i < 10, cond_body,
                                       [tf.constant(0), tf.constant(0.0)], name="cond_body")

    def in_cond_branch():
        _, total = tf1.while_loop(lambda k, a: k < 4, lambda k, a: (k + 1, a + tf.reduce_sum(x)),
                                  [tf.constant(0), tf.constant(0.0)], name="branch_loop")
        return total

    t["in_cond"] = tf1.cond(flag, in_cond_branch, lambda: tf.constant(-1.0), name="in_cond")

    v = tf1.Variable(tf.zeros([3]), name="v")

    def assign_body(i):
        with tf.control_dependencies([tf1.assign_add(v, x)]):
            return i + 1

    t["assign"] = tf1.while_loop(lambda i: i < 3, assign_body, [tf.constant(0)], name="assign")
    t["v"] = v.value()
    w = tf1.Variable([1.0, 2.0, 3.0], name="w")
    _, t["read_var"] = tf1.while_loop(
        lambda i, s: i < 4, lambda i, s: (i + 1, s + w * tf.cast(i, tf.float32)),
        [tf.constant(0), tf.zeros([3])], name="read_var")
    ta = tf1.TensorArray(tf.float32, size=4, name="written")
    _, ta = tf1.while_loop(lambda i, ta: i < 4,
                           lambda i, ta: (i + 1, ta.write(i, x * tf.cast(i, tf.float32))),
                           [tf.constant(0), ta], name="ta_write")
    t["ta_stack"] = ta.stack()
    t["ta_size"] = ta.size()
    seq = tf.reshape(tf.range(12, dtype=tf.float32), [4, 3]) * x
    ta_in = tf1.TensorArray(tf.float32, size=4, name="unstacked").unstack(seq)
    _, t["ta_read"] = tf1.while_loop(lambda i, s: i < 4, lambda i, s: (i + 1, s + ta_in.read(i)),
                                     [tf.constant(0), tf.zeros([3])], name="ta_read")
    _, grad_y = tf1.while_loop(lambda i, y: i < 3, lambda i, y: (i + 1, tf.tanh(y) * x),
                               [tf.constant(0), x * 0.5], name="grad_loop")
    t["grad_y"] = grad_y
    t["grad_x"] = tf.gradients(tf.reduce_sum(grad_y * grad_y), x)[0]
    inputs = tf1.placeholder(tf.float32, [2, 4, 3], name="inputs")
    cell = tf1.nn.rnn_cell.BasicRNNCell(5)
    t["rnn_out"], t["rnn_state"] = tf1.nn.dynamic_rnn(cell, inputs, dtype=tf.float32)
    lstm = tf1.nn.rnn_cell.LSTMCell(4)
    t["lstm_out"], (t["lstm_c"], t["lstm_h"]) = tf1.nn.dynamic_rnn(lstm, inputs, dtype=tf.float32,
                                                                  scope="lstm")
    return t


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "model.ckpt")
    x_value = np.array([0.5, -1.25, 2.0], np.float32)
    graph = tf.Graph()
    with graph.as_default():
        t = build()
        names = {k: v.name for k, v in t.items()}
        op_types = sorted({op.type for op in graph.get_operations()})
        print("op types:", " ".join(op_types))
        saver = tf1.train.Saver()
        loops = ["counting", "several_i", "several_s", "several_p", "nested", "cond_body",
                 "in_cond", "read_var", "grad_y", "grad_x"]
        seq_value = np.linspace(-1, 1, 24).reshape(2, 4, 3).astype(np.float32)
        plan = [("loops", loops, {"x:0": x_value}),
                ("tensor_arrays", ["ta_stack", "ta_size", "ta_read"], {"x:0": x_value}),
                ("rnn", ["rnn_out", "rnn_state", "lstm_out", "lstm_c", "lstm_h"],
                 {"inputs:0": seq_value}),
                ("fed", ["counting", "several_s", "in_cond"],
                 {"x:0": x_value, "n:0": np.int32(2), "flag:0": False}),
                ("assign", ["assign"], {"x:0": x_value}),
                ("after", ["v"], {})]
        want = {}
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            for var in tf1.global_variables():  # TF's RNN kernel, seeded
                if "rnn" in var.name or "lstm" in var.name:
                    var.load(np.random.RandomState(3).randn(*var.shape).astype(np.float32) * 0.5,
                             sess)
            saver.save(sess, prefix)
            for line, fetch, feeds in plan:
                want[line] = dict(zip(fetch, sess.run([names[k] for k in fetch], feeds)))
    tally = Tally()
    for needed in ("Enter", "RefEnter", "Exit", "LoopCond", "NextIteration", "Merge", "Switch",
                   "StackPushV2", "StackPopV2"):
        tally.check(f"TF's graph has {needed}", None if needed in op_types else "missing")

    write_bundle(os.path.join(work, "feeds"),
                 {"x:0": x_value, "n:0": np.int32(2), "flag:0": np.bool_(False),
                 "inputs:0": seq_value})
    lines = [f"run {line} " + " ".join(names[k] for k in fetch) + " | " + " ".join(feeds)
             for line, fetch, feeds in plan]
    got = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"), lines,
                     os.path.join(work, "eager_out"))
    for line, fetch, _ in plan:
        if ".error" in got.get(line, {}):
            tally.check(f"{line} runs", got[line][".error"])
            continue
        for k in fetch:
            tally.check(f"{line} {k}", mismatch(k, got[line][names[k]], want[line][k], 1e-6))
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
