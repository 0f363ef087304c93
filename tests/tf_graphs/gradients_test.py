"""Gradients and gradient helpers whose edge cases TF 2.21 decides.

  gradients_test.py driver=build/tests/tf_graphs/gradient_driver work=DIR

Each case is computed by TF (eagerly, and in a TF1 graph whose placeholders
have every dimension unknown: the two must agree) and by eager's
gradient_driver (eagerly, and in a graph of all-unknown placeholders):

- BroadcastGradientArgs on shapes with negative entries (TF's kernel takes
  them as numbers), zeros and ones, int32 and int64: eager returns TF's
  values bit for bit or refuses where TF refuses.
- Prod's gradient (TF's _ProdGrad: exclusive cumulative products from both
  sides) where prod / x breaks: products that overflow or underflow float32,
  one and several zeros in a group, several and negative axes, keep_dims,
  no axes. Within 1e-6 of the scale (|eager - TF| <= 1e-6 * max(1, |TF|)),
  and inf/NaN exactly where TF has them.
- SelectV2's gradients of t and e where condition, t and e broadcast
  differently ([2,1,1], [1,3,1], [1,1,4], ...), summed back to each input.
"""

import os
import shutil
import subprocess
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, read_bundle, tf, tf1, write_bundle

TOL = 1e-6


def bga_cases():
    dims = [[-1], [-1, 3], [1, 3], [4, 3], [2, -1], [2, 1], [1], [5], [-1, -1], [-1, 1],
            [1, -1], [-2], [-3], [0], [], [3, -1], [-5, 2], [2, -3], [1, 1], [3], [0, 3]]
    cases = {}
    for dt in (np.int32, np.int64):
        for i, a in enumerate(dims):
            for j, b in enumerate(dims):
                if (i * 7 + j * 3) % 4 != 0 and not (set(a) | set(b)) & {-1, -2}:
                    continue  # a sample of the pairs without -1/-2: all with
                cases[f"bga_{np.dtype(dt).name}_{i}_{j}"] = (np.array(a, dt), np.array(b, dt))
    return cases


class TfBga:
    """(r0, r1) or the error, eagerly and in one graph on [None] placeholders."""

    def __init__(self):
        self.graph = tf.Graph()
        self.nodes = {}
        with self.graph.as_default():
            for dt in (tf.int32, tf.int64):
                p0 = tf1.placeholder(dt, [None])
                p1 = tf1.placeholder(dt, [None])
                self.nodes[dt.as_numpy_dtype] = (p0, p1, tf.raw_ops.BroadcastGradientArgs(s0=p0,
                                                                                          s1=p1))
        self.sess = tf1.Session(graph=self.graph)

    def __call__(self, s0, s1):
        try:
            # tf.constant: given numpy arrays, the eager fast path may convert
            # int64 values to T's default int32 (TF 2.21).
            r = tf.raw_ops.BroadcastGradientArgs(s0=tf.constant(s0), s1=tf.constant(s1))
            eager = (r[0].numpy(), r[1].numpy())
        except tf.errors.OpError as e:
            eager = e
        p0, p1, r = self.nodes[s0.dtype.type]
        try:
            graph = tuple(self.sess.run(r, {p0: s0, p1: s1}))
        except tf.errors.OpError as e:
            graph = e
        return eager, graph


def prod_cases():
    rng = np.random.RandomState(31)
    f32 = np.float32
    cases = {
        # prod / x: inf / inf = NaN where the others' product is finite.
        "overflow": (np.array([[1e30, 1e30, 1e-30, 1e-30]], f32), [1], False),
        # Others' products below float32's range or in its subnormals.
        "underflow": (np.array([[1e-20, 1e-20, 1e20, 3.0], [1e-30, 2e-10, 5e-9, 1e-8]], f32),
                      [-1], True),
        "tiny_group": (np.array([1e-38, 1e-3, 4e-3, 0.5], f32), [0], False),
        "one_zero": (np.array([[0.0, 2.0, -3.0], [1.5, 0.0, 4.0], [2.0, 3.0, 0.5]], f32),
                     [1], False),
        "two_zeros": (np.array([[0.0, 2.0, 0.0], [1.5, -0.0, 4.0], [0.0, 0.0, 0.0]], f32),
                      [0], True),
        "axes_0_2": (rng.uniform(-2, 2, (3, 2, 4)).astype(f32), [0, 2], False),
        "axes_neg": (rng.uniform(-2, 2, (2, 3, 4)).astype(f32), [-1, 0], True),
        "axes_2_0_zero": (np.where(rng.rand(2, 3, 4) < 0.15, 0,
                                   rng.uniform(-2, 2, (2, 3, 4))).astype(f32), [2, 0], False),
        "all_axes": (rng.uniform(0.5, 1.5, (2, 3)).astype(f32), [0, 1], False),
        "no_axes": (rng.uniform(-2, 2, (2, 3)).astype(f32), [], False),
        "rank4_mid": (rng.uniform(-2, 2, (2, 3, 2, 3)).astype(f32), [1, -2], True),
        "float64_big": (np.array([[1e200, 1e200, 1e-200, 1e-200, 7.0]]), [1], False),
        "float64_zeros": (np.array([[0.0, 3.0], [0.0, 0.0], [2.0, 5.0]]), [-2], False),
    }
    out = {}
    for name, (x, axes, keep) in cases.items():
        with np.errstate(over="ignore", under="ignore"):
            y = np.prod(x, axis=tuple(axes), keepdims=keep)
        u = rng.uniform(0.5, 1.5, np.shape(y)).astype(x.dtype)
        out["prod_" + name] = (x, u, axes, keep)
    return out


def tf_prod(x, u, axes, keep):
    """dx of reduce_prod with upstream u: eagerly and in a graph."""
    xt = tf.constant(x)
    with tf.GradientTape() as tape:
        tape.watch(xt)
        y = tf.reduce_prod(xt, axis=tf.constant(axes, tf.int32), keepdims=keep)
    eager = tape.gradient(y, xt, output_gradients=tf.constant(u)).numpy()
    g = tf.Graph()
    with g.as_default():
        px = tf1.placeholder(x.dtype, [None] * x.ndim)
        pu = tf1.placeholder(u.dtype, [None] * np.ndim(u))
        y = tf.reduce_prod(px, axis=tf.constant(axes, tf.int32), keepdims=keep)
        dx = tf.gradients(y, px, grad_ys=pu)[0]
        with tf1.Session(graph=g) as sess:
            graph = sess.run(dx, {px: x, pu: u})
    return eager, graph


def select_cases():
    rng = np.random.RandomState(32)
    shapes = [([2, 1, 1], [1, 3, 1], [1, 1, 4]),
              ([1, 3, 1], [2, 1, 4], [4]),
              ([3, 1], [2, 1, 1], [1, 4]),
              ([], [2, 3], [3]),
              ([2, 3], [], [1, 1]),
              ([4], [2, 1], [1, 4]),
              ([1], [1, 1], [2, 3]),
              ([2, 1, 1], [2, 3, 4], [1])]
    out = {}
    for i, (cs, ts, es) in enumerate(shapes):
        c = rng.rand(*cs) < 0.5
        t = rng.uniform(-1, 1, ts).astype(np.float32)
        e = rng.uniform(-1, 1, es).astype(np.float32)
        ys = np.broadcast_shapes(tuple(cs), tuple(ts), tuple(es))
        u = rng.uniform(-1, 1, ys).astype(np.float32)
        out[f"select_{i}"] = (np.asarray(c), t, e, u)
    return out


def tf_select(c, t, e, u):
    ct, tt, et = tf.constant(c), tf.constant(t), tf.constant(e)
    with tf.GradientTape() as tape:
        tape.watch([tt, et])
        y = tf.where(ct, tt, et)
    dt, de = tape.gradient(y, [tt, et], output_gradients=tf.constant(u))
    eager = (dt.numpy(), de.numpy())
    g = tf.Graph()
    with g.as_default():
        ps = [tf1.placeholder(v.dtype, [None] * np.ndim(v)) for v in (c, t, e, u)]
        y = tf.where(ps[0], ps[1], ps[2])
        grads = tf.gradients(y, [ps[1], ps[2]], grad_ys=ps[3])
        with tf1.Session(graph=g) as sess:
            graph = tuple(sess.run(grads, dict(zip(ps, (c, t, e, u)))))
    return eager, graph


def same_value(name, got, want, tol):
    """mismatch() that also wants inf and NaN exactly where TF has them."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape == want.shape and want.dtype.kind == "f":
        if not np.array_equal(np.isnan(got), np.isnan(want)) or \
                not np.array_equal(np.isinf(got), np.isinf(want)):
            return f"{name}: inf/NaN differ: eager {got.tolist()}, TF {want.tolist()}"
        finite = np.isfinite(want)
        if not np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]):
            return f"{name}: infinities differ in sign"
        got, want = np.where(finite, got, 0), np.where(finite, want, 0)
    return mismatch(name, got, want, tol)


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    inputs, plan, want = {}, [], {}
    tf_bga = TfBga()
    for name, (s0, s1) in bga_cases().items():
        inputs[f"{name}/s0"], inputs[f"{name}/s1"] = s0, s1
        plan.append(f"bga {name}")
        want[name] = (["r0", "r1"], *tf_bga(s0, s1), 0)
    for name, (x, u, axes, keep) in prod_cases().items():
        inputs[f"{name}/x"], inputs[f"{name}/u"] = x, u
        plan.append(f"prod {name} {int(keep)} " + " ".join(map(str, axes)))
        eager, graph = tf_prod(x, u, axes, keep)
        want[name] = (["dx"], (eager,), (graph,), 0)
    for name, (c, t, e, u) in select_cases().items():
        for key, v in zip("cteu", (c, t, e, u)):
            inputs[f"{name}/{key}"] = v
        plan.append(f"select {name}")
        want[name] = (["dt", "de"], *tf_select(c, t, e, u), TOL)
    write_bundle(os.path.join(work, "in"), inputs)
    with open(os.path.join(work, "plan"), "w") as f:
        f.write("\n".join(plan) + "\n")
    proc = subprocess.run([driver, os.path.join(work, "in"), os.path.join(work, "plan"),
                           os.path.join(work, "out")], capture_output=True, text=True)
    if proc.returncode != 0:
        raise SystemExit(f"gradient_driver failed ({proc.returncode}): {proc.stderr.strip()}")
    got = {}
    for key, value in read_bundle(os.path.join(work, "out")).items():
        name, mode, out = key.split("/", 2)
        got.setdefault((name, mode), {})[out] = value
    tally = Tally()
    refusals = 0
    for name, (keys, tf_eager, tf_graph, tol) in want.items():
        # TF's two modes agree (else the reference itself is in doubt).
        if isinstance(tf_eager, Exception) != isinstance(tf_graph, Exception):
            tally.check(f"{name} TF", f"TF eager {tf_eager!r} vs TF graph {tf_graph!r}")
            continue
        for mode in ("eager", "graph"):
            result = got.get((name, mode), {})
            what = f"{name} {mode}"
            if isinstance(tf_eager, Exception):
                refusals += 1
                tally.check(what, None if ".error" in result else
                            f"TF refuses ({tf_eager.message.splitlines()[0]}), eager gave {result}")
                continue
            if ".error" in result:
                tally.check(what, f"eager refused what TF computes: {result['.error']}")
                continue
            problems = [same_value(f"{what} {k}", result[k], w, tol)
                        for k, w in zip(keys, tf_eager)]
            problems += [same_value(f"{what} {k} (TF graph)", result[k], w, tol)
                         for k, w in zip(keys, tf_graph)]
            tally.check(what, "; ".join(p for p in problems if p) or None)
    if refusals < 10:
        tally.check("refusals", f"only {refusals} BroadcastGradientArgs refusals; expected 10+")
    sys.exit(tally.finish())


if __name__ == "__main__":
    main()
