"""TF1's variable_scope / get_variable and the ExponentialMovingAverage's
names under scopes: eager's program against TF 2.21's.

  variable_scope_test.py driver=build/tests/tf_graphs/variable_scope_driver work=DIR

variable_scope_driver builds, with eager's VariableScope and GetVariable
(ops/variable_scope.h), the program TF builds below with
tf.compat.v1.variable_scope and get_variable (reuse=True, AUTO_REUSE, a
scope entered twice, nested scopes) and two moving averages, one applied
under a variable scope and one under a name scope; it saves a checkpoint
with eager's Saver and lists its variables and the averages' names.
Checked: the global variables' names are TF's, each average_name (before
and after apply) is TF's, and TF's Saver restores eager's checkpoint into
TF's graph (every TF variable found by its name) with eager's values.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

from tfgraph import Tally, driver_arg, tf, tf1


def tf_program():
    """TF's graph, its global variables' names and the average names."""
    graph = tf.Graph()
    averages = []
    with graph.as_default():
        with tf1.variable_scope("layer", use_resource=False):
            tf1.get_variable("w", [3, 2])
            tf1.get_variable("b", [2])
        with tf1.variable_scope("layer", reuse=True, use_resource=False):
            w = tf1.get_variable("w", [3, 2])
            with tf1.variable_scope("inner", reuse=tf1.AUTO_REUSE):
                tf1.get_variable("k", [2])
                tf1.get_variable("k", [2])
        with tf1.variable_scope("layer", use_resource=False):
            with tf1.variable_scope("deeper"):
                tf1.get_variable("k", [4], dtype=tf.float64)
        with tf1.variable_scope("scope1"):
            v0 = tf1.Variable(10.0, name="v0", use_resource=False)
        with tf1.variable_scope("scope2"):
            ema = tf1.train.ExponentialMovingAverage(0.25, name="foo")
            averages.append(("scope2-before", ema.average_name(v0)))
            ema.apply([v0, w])
            averages.append(("scope2-after", ema.average_name(v0)))
        with tf1.name_scope("ns"):
            ema2 = tf1.train.ExponentialMovingAverage(0.5)
            averages.append(("ns-before", ema2.average_name(v0)))
            ema2.apply([v0])
            averages.append(("ns-after", ema2.average_name(v0)))
        names = [v.op.name for v in tf1.global_variables()]
    return graph, names, averages


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tally = Tally()
    proc = subprocess.run([driver, work], capture_output=True, text=True)
    if proc.returncode != 0:
        tally.check("eager builds and saves the program", proc.stderr.strip())
        return tally.finish()
    eager_names, eager_averages = [], []
    with open(os.path.join(work, "names")) as f:
        for line in f:
            kind, rest = line.rstrip("\n").split(" ", 1)
            if kind == "variable":
                eager_names.append(rest)
            else:
                eager_averages.append(tuple(rest.split(" ", 1)))
    graph, names, averages = tf_program()
    print("TF's variables:", names)
    tally.check("the global variables are TF's, by name",
                None if sorted(eager_names) == sorted(names)
                else f"eager {sorted(eager_names)}, TF {sorted(names)}")
    tally.check("each average_name is TF's",
                None if eager_averages == averages else f"eager {eager_averages}, TF {averages}")
    prefix = os.path.join(work, "model.ckpt")
    reader = tf.train.load_checkpoint(prefix)
    with graph.as_default():
        saver = tf1.train.Saver()
        with tf1.Session(graph=graph) as sess:
            try:
                saver.restore(sess, prefix)
                problem = None
                for v in tf1.global_variables():
                    if not np.array_equal(sess.run(v), reader.get_tensor(v.op.name)):
                        problem = f"{v.op.name} differs from eager's checkpoint"
            except Exception as e:  # a name TF looks for that eager did not save
                problem = f"{type(e).__name__}: {str(e).splitlines()[0]}"
            tally.check("TF's Saver restores eager's checkpoint into TF's graph", problem)
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
