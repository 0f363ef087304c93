"""TF1 dropout graphs made by TF 2.21, imported, restored and run by eager.

  dropout_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

TF builds, in tf.compat.v1 graph mode, h = x W + b and on it:
  seeded     tf1.nn.dropout(h, rate=0.3, seed=5)          RandomUniform ->
             GreaterEqual -> SelectV2 (TF 2.x's form)
  fed_rate   tf1.nn.dropout(h, rate=<placeholder>, seed=7) (Sub, RealDiv)
  layer      tf1.layers.dropout(h, 0.4, training=<placeholder>, seed=9): a
             tf.cond (Switch/Merge) whose true branch holds the dropout
  noise      tf1.nn.dropout(h, rate=0.5, noise_shape=[1, 32], seed=11):
             the RandomUniform's shape is a Const, the mask broadcasts
  floor      TF <= 1.13's dropout written out: floor(keep + uniform) *
             (h / keep), seed 13 (Floor, RealDiv, AddV2)
  unseeded   tf1.nn.dropout(h, rate=0.25): seeds (0, 0), nondeterministic
and saves it. Then TF and eager (graph_run_driver: one Session for the
whole plan, as TF's one session) run the same sequence: an eval run (rate
0, training false), two training runs (rate 0.5, training true), an eval run.

Checks: eval outputs equal h bit for bit, in TF and eager alike. Every
seeded output of every run equals TF's bit for bit: eager's RandomUniform is
TF's Philox4x32-10 with TF's seeding, reservation and float conversion, so
the masks are TF's, and a second run draws TF's second mask. A new eager
Session (a second driver process) starts the sequence again, as a new TF
session does. The unseeded dropout cannot equal TF's: it zeros 25% of the
entries (within 5 standard deviations), scales the others by exactly 1/0.75
(the Const TF wrote) and draws a new mask each run.
"""

import os
import shutil
import sys

os.environ.setdefault("TF_USE_LEGACY_KERAS", "1")  # tf.compat.v1.layers needs tf-keras

import numpy as np  # noqa: E402

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1, write_bundle  # noqa: E402

BATCH, FEATURES, UNITS = 200, 16, 32


def build(rng):
    """The graph; returns (tensors by short name, variables)."""
    x = tf1.placeholder(tf.float32, [None, FEATURES], name="x")
    w = tf1.Variable(tf.zeros([FEATURES, UNITS]), name="W")
    b = tf1.Variable(tf.zeros([UNITS]), name="b")
    h = tf.add(tf.matmul(x, w), b, name="h")
    rate = tf1.placeholder_with_default(0.0, [], name="rate")
    training = tf1.placeholder_with_default(False, [], name="is_training")
    t = {"h": h}
    with tf1.name_scope("seeded"):
        t["seeded"] = tf1.nn.dropout(h, rate=0.3, seed=5)
    with tf1.name_scope("fed_rate"):
        t["fed_rate"] = tf1.nn.dropout(h, rate=rate, seed=7)
    t["layer"] = tf1.layers.dropout(h, rate=0.4, training=training, seed=9, name="layer")
    with tf1.name_scope("noise"):
        t["noise"] = tf1.nn.dropout(h, rate=0.5, noise_shape=[1, UNITS], seed=11)
    with tf1.name_scope("floor"):
        keep = tf.constant(0.6)
        uniform = tf1.random_uniform(tf.shape(h), seed=13)
        t["floor"] = tf.math.divide(h, keep) * tf.floor(keep + uniform)
    with tf1.name_scope("unseeded"):
        t["unseeded"] = tf1.nn.dropout(h, rate=0.25)
    return t, [w, b]


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    prefix = os.path.join(work, "model.ckpt")
    rng = np.random.RandomState(26)
    x_value = rng.randn(BATCH, FEATURES).astype(np.float32)
    graph = tf.Graph()
    with graph.as_default():
        t, (w, b) = build(rng)
        names = {k: v.name for k, v in t.items()}
        op_types = sorted({op.type for op in graph.get_operations()})
        print("op types:", " ".join(op_types))
        saver = tf1.train.Saver()
        seeded = ["seeded", "fed_rate", "layer", "noise", "floor"]
        train_fetch = seeded + ["unseeded", "h"]
        eval_fetch = ["h", "fed_rate", "layer"]
        train_feeds = {"x:0": x_value, "rate:0": np.float32(0.5), "is_training:0": True}
        plan = [("eval1", eval_fetch, {"x:0": x_value}),
                ("train1", train_fetch, train_feeds),
                ("train2", train_fetch, train_feeds),
                ("eval2", eval_fetch, {"x:0": x_value})]
        want = {}
        with tf1.Session(graph=graph) as sess:
            sess.run(tf1.global_variables_initializer())
            w.load(rng.randn(FEATURES, UNITS).astype(np.float32) * 0.5, sess)
            b.load(rng.randn(UNITS).astype(np.float32) * 0.1, sess)
            saver.save(sess, prefix)
            for line, fetch, feeds in plan:
                values = sess.run([names[k] for k in fetch], feeds)
                want[line] = dict(zip(fetch, values))
    tally = Tally()
    for needed in ("RandomUniform", "GreaterEqual", "SelectV2", "Floor", "Switch", "Merge"):
        tally.check(f"TF's graph has {needed}", None if needed in op_types else "missing")

    write_bundle(os.path.join(work, "feeds"),
                 {"x:0": x_value, "rate:0": np.float32(0.5), "is_training:0": np.bool_(True)})
    lines = [f"run {line} " + " ".join(names[k] for k in fetch) + " | " + " ".join(feeds)
             for line, fetch, feeds in plan]
    got = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"), lines,
                     os.path.join(work, "eager_out"))
    for line, fetch, _ in plan:
        if ".error" in got[line]:
            tally.check(f"{line} runs", got[line][".error"])
            continue
        for k in fetch:
            if k == "unseeded":
                continue
            # eager's MatMul may add in another order than TF's, so h and
            # the dropouts of it (h times a mask and a scale) agree to 1e-6;
            # the masks themselves are compared exactly below.
            tally.check(f"{line} {k}", mismatch(k, got[line][names[k]], want[line][k], 1e-6))
    # Seeded masks: the zero pattern is TF's exactly (values may differ by h's rounding).
    for line in ("train1", "train2"):
        if ".error" in got[line]:
            continue
        for k in seeded:
            e, w_ = got[line][names[k]], want[line][k]
            same = np.array_equal(e == 0, w_ == 0)
            tally.check(f"{line} {k}: TF's mask", None if same else
                        f"{int(np.sum((e == 0) != (w_ == 0)))} entries dropped differently")
        # Dropout values are eager's h times the scale, bit for bit.
        h_e = got[line][names["h"]]
        tally.check(f"{line} seeded: kept entries are h * (1 / 0.7)", mismatch(
            "seeded", got[line][names["seeded"]],
            np.where(want[line]["seeded"] != 0, h_e * np.float32(1 / 0.7), 0).astype(np.float32),
            0))
    # The second run draws another mask than the first.
    if ".error" not in got["train1"] and ".error" not in got["train2"]:
        for k in seeded + ["unseeded"]:
            a, c = got["train1"][names[k]], got["train2"][names[k]]
            tally.check(f"{k}: run 2's mask differs from run 1's",
                        None if not np.array_equal(a == 0, c == 0) else "same mask twice")
    # Eval: exactly h.
    for line in ("eval1", "eval2"):
        if ".error" in got[line]:
            continue
        h_e = got[line][names["h"]]
        for k in ("fed_rate", "layer"):
            tally.check(f"{line} {k} is h", mismatch(k, got[line][names[k]], h_e, 0))
    # Unseeded: statistics only.
    for line in ("train1", "train2"):
        if ".error" in got[line]:
            continue
        u, h_e = got[line][names["unseeded"]], got[line][names["h"]]
        n = u.size
        zeros = int(np.sum(u == 0))
        sd = np.sqrt(n * 0.25 * 0.75)
        tally.check(f"{line} unseeded zeros {zeros} of {n}",
                    None if abs(zeros - 0.25 * n) <= 5 * sd else f"expected {0.25 * n:.0f} +- {5 * sd:.0f}")
        kept = u != 0
        tally.check(f"{line} unseeded kept entries are h / 0.75",
                    mismatch("unseeded", u[kept], (h_e * np.float32(1 / 0.75))[kept], 0))
    # A new Session starts every seeded sequence again.
    again = run_driver(driver, prefix + ".meta", prefix, os.path.join(work, "feeds"),
                       ["run again " + " ".join(names[k] for k in ("seeded", "floor"))
                        + " | x:0 rate:0 is_training:0"], os.path.join(work, "eager_again"))
    if ".error" in again["again"]:
        tally.check("a new Session runs", again["again"][".error"])
    else:
        for k in ("seeded", "floor"):
            e = again["again"][names[k]]
            tally.check(f"new Session {k}: TF's first mask",
                        None if np.array_equal(e == 0, want["train1"][k] == 0) else "other mask")
    return tally.finish()


if __name__ == "__main__":
    sys.exit(main())
