"""The ops of TF 2.21's graphs of common layers that eager added (issue 39), judged by TF.

  layer_ops_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

One TF1 graph holds a case per op and attribute value (raw ops, so that
each node has the op type under test, and tf.gradients of them, so that
TF's own gradient graphs run too), on constants. TF computes each case;
eager's graph_run_driver imports the exported .meta and runs each case on
its own. A case TF computes must come out of eager equal (bit for bit for
integers and exact ops, within 1e-5 of the scale for float kernels whose
summation order may differ); a case TF refuses at run time must be refused
by eager too.
"""

import os
import shutil
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1

FLOAT_TOL = 1e-5
raw = tf.raw_ops


def build_cases():
    """{case name: (tensor, tolerance)} in a new graph, and the graph."""
    g = tf.Graph()
    cases = {}
    rng = np.random.RandomState(39)

    def add(name, tensor, tol=0):
        cases[name] = (tf.identity(tensor, name=name), tol)

    with g.as_default():
        f = tf.constant((rng.randn(3, 4) * 5).astype(np.float32))
        f64 = tf.constant((rng.randn(2, 5) * 5).astype(np.float64))
        i32 = tf.constant(np.array([[7, -7, 7, -7], [0, 5, -5, 3]], np.int32))
        d32 = tf.constant(np.array([2, -2, 3, -3], np.int32))
        i64 = tf.constant(np.array([7, -7, -2**63, 9], np.int64))
        d64 = tf.constant(np.array([-2, 2, -1, -4], np.int64))
        # Elementwise (group 1).
        add("abs", raw.Abs(x=f))
        add("abs_int", raw.Abs(x=i32))
        add("sign", raw.Sign(x=tf.concat([f, tf.zeros([1, 4])], 0)))
        add("sign_int64", raw.Sign(x=i64))
        add("relu6", raw.Relu6(features=f))
        add("relu6_f64", raw.Relu6(features=f64))
        add("leaky_relu_default", raw.LeakyRelu(features=f))
        add("leaky_relu_alpha", raw.LeakyRelu(features=f64, alpha=0.01))
        add("greater", raw.Greater(x=f, y=tf.constant([0.0, 1.0, -1.0, 2.0])))
        add("less", raw.Less(x=i32, y=d32))
        add("less_equal", raw.LessEqual(x=i32, y=tf.constant(3)))
        add("not_equal", raw.NotEqual(x=i32, y=d32))
        add("not_equal_bool", raw.NotEqual(x=raw.Greater(x=f, y=0.0),
                                           y=tf.constant([True, False, True, False])))
        b1 = raw.Greater(x=f, y=0.0)
        b2 = raw.Less(x=f, y=2.0)
        add("logical_and", raw.LogicalAnd(x=b1, y=b2))
        add("logical_or", raw.LogicalOr(x=b1, y=tf.constant([True, False, False, False])))
        add("logical_not", raw.LogicalNot(x=b1))
        add("floordiv_int32", raw.FloorDiv(x=i32, y=d32))
        add("floormod_int32", raw.FloorMod(x=i32, y=d32))
        add("floordiv_int64_min", raw.FloorDiv(x=i64, y=d64))
        add("floormod_int64_min", raw.FloorMod(x=i64, y=d64))
        add("floordiv_float", raw.FloorDiv(x=f, y=tf.constant([2.0, -2.0, 0.75, -1.5])))
        add("floormod_float", raw.FloorMod(x=f, y=tf.constant([2.0, -2.0, 0.75, -1.5])))
        add("floormod_f64", raw.FloorMod(x=f64, y=tf.constant(-1.25, tf.float64)))
        add("add_n_3", raw.AddN(inputs=[f, f * 2.0, f * -0.5]))
        # Distinct inputs (AddN of x * c_k is rewritten by grappler into x * sum(c_k)).
        add("add_n_11", raw.AddN(inputs=[tf.constant((rng.randn(3, 4) * 1e3).astype(np.float32))
                                         for _ in range(11)]))
        add("add_n_16", raw.AddN(inputs=[tf.constant((rng.randn(5) * 1e3).astype(np.float32))
                                         for _ in range(16)]))
        add("add_n_int", raw.AddN(inputs=[i32, i32, d32 + tf.zeros_like(i32)]))
        # TF's gradient graphs of them: Relu6Grad, LeakyReluGrad, FloorMod's.
        up = tf.constant(rng.randn(3, 4).astype(np.float32))
        add("grad_relu6", tf.gradients(raw.Relu6(features=f), f, up)[0])
        add("grad_leaky_relu", tf.gradients(raw.LeakyRelu(features=f, alpha=0.3), f, up)[0])
        add("grad_abs", tf.gradients(raw.Abs(x=f), f, up)[0])
        y = tf.constant([2.0, -2.0, 0.75, -1.5])
        add("grad_floormod_y", tf.gradients(raw.FloorMod(x=f, y=y), y, up)[0], FLOAT_TOL)
        add("grad_add_n", tf.gradients(raw.AddN(inputs=[f, f]), f, up)[0])
        # Smooth activations (ops/activation_ops.h) and TF's gradient graphs
        # of them (SeluGrad, SoftplusGrad, SoftsignGrad, Erf's), with values
        # past Softplus's switch points (|x| > 13.9 for float32, 34 for float64).
        wide = tf.constant(np.array([[-40, -15, -13, -1e-3], [0, 1e-3, 13, 15],
                                     [40, -90, 90, 0.5]], np.float32))
        wide64 = tf.constant(np.array([-50, -36, -33, 0.25, 33, 36, 50], np.float64))
        for name, op in (("selu", raw.Selu), ("softplus", raw.Softplus),
                         ("softsign", raw.Softsign)):
            add(name, op(features=f), FLOAT_TOL)
            add(name + "_f64", op(features=f64), FLOAT_TOL)
            add(name + "_wide", op(features=wide), FLOAT_TOL)
            add(name + "_wide64", op(features=wide64), FLOAT_TOL)
            add("grad_" + name, tf.gradients(op(features=f), f, up)[0], FLOAT_TOL)
            add("grad_" + name + "_wide", tf.gradients(op(features=wide), wide, up)[0], FLOAT_TOL)
        add("erf", raw.Erf(x=f * 0.3), FLOAT_TOL)
        add("erf_f64", raw.Erf(x=f64 * 0.3), FLOAT_TOL)
        add("grad_erf", tf.gradients(raw.Erf(x=f), f, up)[0], FLOAT_TOL)
        # Second order: TF's gradients of the grad ops (_SeluGradGrad,
        # _SoftplusGradGrad) in both inputs.
        for name, op in (("selu", raw.Selu), ("softplus", raw.Softplus)):
            gx = tf.gradients(op(features=f), f, up)[0]
            add("grad2_" + name, tf.gradients(gx, [f, up], up * 0.5 + 1.0)[0], FLOAT_TOL)
            add("grad2_" + name + "_up", tf.gradients(gx, [f, up], up * 0.5 + 1.0)[1], FLOAT_TOL)
        # Shape and array ops (group 2), and TF's gradients of them.
        x = tf.constant(rng.randn(4, 5, 3).astype(np.float32))
        add("expand_dims_0", raw.ExpandDims(input=x, axis=0))
        add("expand_dims_neg", raw.ExpandDims(input=i32, axis=tf.constant(-1, tf.int64)))
        add("fill", raw.Fill(dims=[2, 3], value=tf.constant(1.5)))
        add("fill_int64_dims", raw.Fill(dims=tf.constant([3, 1], tf.int64), value=tf.constant(7)))
        add("zeros_like", raw.ZerosLike(x=x))
        add("ones_like_int", raw.OnesLike(x=i32))
        add("range_int", raw.Range(start=3, limit=-8, delta=-3))
        add("range_int64", raw.Range(start=tf.constant(0, tf.int64), limit=tf.constant(10, tf.int64),
                                     delta=tf.constant(4, tf.int64)))
        add("range_float", raw.Range(start=0.1, limit=2.0, delta=0.3))
        add("range_double", raw.Range(start=tf.constant(-1.0, tf.float64),
                                      limit=tf.constant(1.0, tf.float64),
                                      delta=tf.constant(0.15, tf.float64)))
        add("tile", raw.Tile(input=i32, multiples=[2, 3]))
        add("tile_int64", raw.Tile(input=x, multiples=tf.constant([1, 2, 1], tf.int64)))
        add("pack_0", raw.Pack(values=[f, f * 2.0, -f]))
        add("pack_neg", raw.Pack(values=[i32, i32 + 1], axis=-1))
        add("pack_scalars", raw.Pack(values=[tf.constant(1), tf.constant(2)]))
        add("pad", raw.Pad(input=x, paddings=[[1, 0], [0, 2], [1, 1]]))
        add("pad_v2", raw.PadV2(input=i32, paddings=tf.constant([[0, 1], [2, 0]], tf.int64),
                                constant_values=-9))
        xs = tf.constant(np.arange(60, dtype=np.float32).reshape(4, 5, 3))
        add("ss_basic", xs[1:3, ::2, 1])
        add("ss_negative", xs[::-1, -2:0:-2, :])
        add("ss_ellipsis_newaxis", xs[..., tf.newaxis, 1])
        add("ss_newaxis_front", xs[tf.newaxis, 2, ..., ::-1])
        add("ss_clamped", xs[-10:10, 4:100:3])
        add("ss_empty", xs[3:1, :, :])
        add("ss_shape", tf.shape(x)[1])
        add("ss_raw_masks", raw.StridedSlice(input=xs, begin=[1, 0, 2], end=[0, 3, 0],
                                             strides=[1, 2, -1], begin_mask=1, end_mask=5,
                                             ellipsis_mask=0, new_axis_mask=0,
                                             shrink_axis_mask=0))
        add("grad_strided_slice", tf.gradients(xs[::-1, 1:4:2, tf.newaxis, 0], xs,
                                               tf.ones([4, 2, 1]) * 3.0)[0])
        add("grad_tile", tf.gradients(raw.Tile(input=x, multiples=[2, 1, 3]), x,
                                      tf.constant(rng.randn(8, 5, 9).astype(np.float32)))[0],
            FLOAT_TOL)
        add("grad_pad", tf.gradients(raw.Pad(input=x, paddings=[[1, 0], [0, 2], [1, 1]]), x,
                                     tf.constant(rng.randn(5, 7, 5).astype(np.float32)))[0])
        add("grad_expand_dims", tf.gradients(raw.ExpandDims(input=f, axis=1), f,
                                             tf.ones([3, 1, 4]))[0])
        # BatchMatMulV2 (group 3): broadcast batch dimensions, adjoints, gradients.
        bx = tf.constant(rng.randn(2, 1, 3, 4).astype(np.float32))
        by = tf.constant(rng.randn(3, 4, 5).astype(np.float32))
        add("bmm_broadcast", raw.BatchMatMulV2(x=bx, y=by), FLOAT_TOL)
        add("bmm_adj_x", raw.BatchMatMulV2(x=tf.constant(rng.randn(3, 4, 2).astype(np.float32)),
                                           y=by, adj_x=True), FLOAT_TOL)
        add("bmm_adj_y_rank2", raw.BatchMatMulV2(x=bx, y=tf.constant(
            rng.randn(6, 4).astype(np.float32)), adj_y=True), FLOAT_TOL)
        add("bmm_adj_both_f64", raw.BatchMatMulV2(
            x=tf.constant(rng.randn(2, 3, 2).astype(np.float64)),
            y=tf.constant(rng.randn(2, 4, 3).astype(np.float64)), adj_x=True, adj_y=True),
            FLOAT_TOL)
        add("bmm_int", raw.BatchMatMulV2(x=tf.constant(np.arange(12, dtype=np.int32).reshape(2, 2, 3)),
                                         y=tf.constant(np.arange(6, dtype=np.int32).reshape(3, 2))))
        bout = raw.BatchMatMulV2(x=bx, y=by, adj_y=False)
        bup = tf.constant(rng.randn(2, 3, 3, 5).astype(np.float32))
        gx, gy = tf.gradients(bout, [bx, by], bup)
        add("grad_bmm_x", gx, FLOAT_TOL)
        add("grad_bmm_y", gy, FLOAT_TOL)
        # Einsum (issue 39): Keras 3's EinsumDense and MultiHeadAttention
        # equations, batch matmul, transposes, reductions, outer products,
        # '...' broadcasting, and TF's gradient graphs of them (_EinsumGrad).
        def rnd(*shape, dtype=np.float32):
            return tf.constant(rng.randn(*shape).astype(dtype))
        einsums = {
            "dense": ("abc,cd->abd", [rnd(2, 3, 4), rnd(4, 5)]),
            "dense_heads": ("abc,cde->abde", [rnd(2, 3, 4), rnd(4, 2, 3)]),
            "attention_scores": ("aecd,abcd->acbe", [rnd(2, 5, 3, 4), rnd(2, 6, 3, 4)]),
            "attention_values": ("acbe,aecd->abcd", [rnd(2, 3, 6, 5), rnd(2, 5, 3, 4)]),
            "attention_output": ("abcd,cde->abe", [rnd(2, 6, 3, 4), rnd(3, 4, 5)]),
            "batch_matmul": ("bij,bjk->bik", [rnd(3, 2, 4), rnd(3, 4, 5)]),
            "transpose": ("ij->ji", [rnd(3, 4)]),
            "reduce": ("ij->i", [rnd(3, 4)]),
            "reduce_all": ("ijk->", [rnd(2, 3, 4)]),
            "outer": ("i,j->ij", [rnd(3), rnd(4)]),
            "dot": ("i,i->", [rnd(5), rnd(5)]),
            "summed_alone": ("xij,jky->ki", [rnd(2, 3, 4), rnd(4, 5, 3)]),
            "ellipsis_broadcast": ("...ij,...jk->...ik", [rnd(2, 1, 2, 3), rnd(3, 3, 4)]),
            "ellipsis_reduce": ("...i,i->...", [rnd(2, 3, 4), rnd(4)]),
            "ellipsis_f64": ("b...c,cd->b...d", [rnd(2, 3, 4, dtype=np.float64),
                                                rnd(4, 2, dtype=np.float64)]),
        }
        for name, (equation, operands) in einsums.items():
            out = raw.Einsum(inputs=operands, equation=equation)
            add("einsum_" + name, out, FLOAT_TOL)
            grads = tf.gradients(out, operands, tf.constant(
                np.asarray(rng.randn(*out.shape.as_list()), out.dtype.as_numpy_dtype)))
            for k, grad in enumerate(grads):
                add(f"grad_einsum_{name}_{k}", grad, FLOAT_TOL)
        add("einsum_int", raw.Einsum(inputs=[i32, tf.transpose(i32)], equation="ij,jk->ik"))
        add("einsum_int64", raw.Einsum(inputs=[i64, d64], equation="i,j->ji"))
        add("bad_einsum_sizes", raw.Einsum(
            inputs=[f, tf1.placeholder_with_default(np.ones((3, 2), np.float32), [None, None])],
            equation="ij,jk->ik"))
        add("bad_einsum_broadcast", raw.Einsum(
            inputs=[tf1.placeholder_with_default(np.ones((2, 2, 3), np.float32), None),
                    tf1.placeholder_with_default(np.ones((5, 3, 4), np.float32), None)],
            equation="...ij,...jk->...ik"))
        # DynamicStitch / ParallelDynamicStitch (issue 39): rows by index,
        # a repeated index (the last write wins), rows no index names (zeros),
        # TF's gradient graph of it (gathers), and TF's gradient graphs of
        # reductions over shapes unknown when built, which stitch the
        # reduced shape together.
        sdata = [rnd(2, 3), rnd(3, 3), rnd(3)]
        sidx = [tf.constant([[4], [1]]), tf.constant([[0, 6, 2]]), tf.constant(5)]
        stitched = raw.DynamicStitch(indices=sidx, data=[tf.reshape(sdata[0], [2, 1, 3]),
                                                         tf.reshape(sdata[1], [1, 3, 3]), sdata[2]])
        add("dynamic_stitch", stitched)
        add("dynamic_stitch_repeated", raw.DynamicStitch(
            indices=[tf.constant([0, 1, 2]), tf.constant([1, 5]), tf.constant([2])],
            data=[tf.constant([1, 2, 3], tf.int64), tf.constant([4, 5], tf.int64),
                  tf.constant([6], tf.int64)]))
        add("parallel_dynamic_stitch", raw.ParallelDynamicStitch(
            indices=[tf.constant([3, 0]), tf.constant([2])],
            data=[tf.constant([[1, 2], [3, 4]]), tf.constant([[5, 6]])]))
        add("dynamic_stitch_empty", raw.DynamicStitch(
            indices=[tf.zeros([0], tf.int32)], data=[tf.zeros([0, 2, 3])]))
        sup = rnd(7, 3)
        for k, grad in enumerate(tf.gradients(stitched, sdata, sup)):
            add(f"grad_dynamic_stitch_{k}", grad)
        for k, grad in enumerate(tf.gradients(raw.ParallelDynamicStitch(
                indices=[tf.constant([1, 0]), tf.constant([2])],
                data=[sdata[0][:, 0], sdata[2][:1]]), [sdata[0], sdata[2]], sup[:3, 0])):
            add(f"grad_parallel_dynamic_stitch_{k}", grad)
        unknown = tf1.placeholder_with_default(rnd(2, 3, 4), [None, None, None])
        add("grad_max_unknown_shape", tf.gradients(tf.reduce_max(unknown, axis=1), unknown,
                                                   rnd(2, 4))[0], FLOAT_TOL)
        add("grad_sum_unknown_shape", tf.gradients(tf.reduce_sum(unknown, axis=[0, 2]), unknown,
                                                   rnd(3))[0], FLOAT_TOL)
        add("grad_mean_unknown_shape", tf.gradients(tf.reduce_mean(unknown, axis=-1), unknown,
                                                    rnd(2, 3))[0], FLOAT_TOL)
        add("bad_dynamic_stitch_negative", raw.DynamicStitch(
            indices=[tf1.placeholder_with_default([0, -1], [None])],
            data=[tf.constant([1.0, 2.0])]))
        add("bad_dynamic_stitch_shapes", raw.DynamicStitch(
            indices=[tf.constant([0, 1]), tf.constant([2])],
            data=[tf1.placeholder_with_default(np.ones((2, 2), np.float32), None),
                  tf1.placeholder_with_default(np.ones((1, 3), np.float32), None)]))
        # Unpack and IdentityN, and TF's gradient graphs of them (Pack of
        # the outputs' gradients, zeros for an output nothing uses).
        u = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
        for axis in (0, 1, -1):
            for k, out in enumerate(raw.Unpack(value=u, num=u.shape[axis], axis=axis)):
                add(f"unpack_axis{axis}_{k}", out)
        add("unpack_int", raw.Unpack(value=i32, num=4, axis=1)[3])
        add("unpack_vector", raw.Unpack(value=d64, num=4)[2])
        parts = raw.Unpack(value=u, num=3, axis=1)
        up_part = tf.constant(rng.randn(2, 4).astype(np.float32))
        add("grad_unpack", tf.gradients([parts[0] * 2.0, parts[2] * up_part], u)[0])
        up_slice = tf.constant(rng.randn(2, 3).astype(np.float32))
        add("grad_unpack_one",
            tf.gradients(raw.Unpack(value=u, num=4, axis=-1)[1], u, up_slice)[0])
        idn = raw.IdentityN(input=[f, i32, u])
        for k in range(3):
            add(f"identity_n_{k}", idn[k])
        add("grad_identity_n", tf.gradients(raw.IdentityN(input=[u, f])[1], f, up)[0])
        # Split and SplitV (LSTM gates), and TF's gradient graphs of them
        # (Concat of the pieces' gradients, zeros for an unused piece).
        sv = tf.constant(rng.randn(3, 8).astype(np.float32))
        for k, piece in enumerate(raw.Split(axis=1, value=sv, num_split=4)):
            add(f"split_{k}", piece)
        add("split_axis0_int", raw.Split(axis=-2, value=i32, num_split=2)[1])
        for k, piece in enumerate(raw.SplitV(value=sv, size_splits=[2, -1, 1], axis=-1,
                                             num_split=3)):
            add(f"split_v_{k}", piece)
        add("split_v_int64", raw.SplitV(value=u, size_splits=tf.constant([1, 2], tf.int64),
                                        axis=1, num_split=2)[1])
        gates = raw.Split(axis=1, value=sv, num_split=4)
        up_gate = tf.constant(rng.randn(3, 2).astype(np.float32))
        add("grad_split", tf.gradients([gates[0] * up_gate, gates[3] * 2.0], sv)[0])
        pv = raw.SplitV(value=sv, size_splits=[5, 3], axis=1, num_split=2)
        add("grad_split_v", tf.gradients(pv[1], sv, tf.constant(rng.randn(3, 3).astype(
            np.float32)))[0])
        add("bad_split_uneven", raw.Split(
            axis=tf1.placeholder_with_default(0, []), value=sv, num_split=2)[0])
        add("bad_split_v_sum", raw.SplitV(
            value=sv, size_splits=tf1.placeholder_with_default([2, 3], [None]), axis=1,
            num_split=2)[0])
        # TopKV2: ties by the lower index first; k as an int32 or int64 input.
        tk = tf.constant(np.array([[1, 5, 3, 5, -2], [0, 0, 7, 0, 0], [2, 2, 2, 2, 2]],
                                  np.float32))
        top = raw.TopKV2(input=tk, k=3)
        add("top_k_values", top.values)
        add("top_k_indices", top.indices)
        top3 = raw.TopKV2(input=x, k=2)
        add("top_k_rank3_values", top3.values)
        add("top_k_rank3_indices", top3.indices)
        add("top_k_int64_k", raw.TopKV2(input=i32, k=tf.constant(4, tf.int64)).indices)
        add("top_k_f64", raw.TopKV2(input=f64, k=5).values)
        add("top_k_0", raw.TopKV2(input=f, k=0).values)
        # TF's gradient graph of TopKV2 (Size, ScatterNd), and those ops alone.
        up_top = tf.constant(rng.randn(4, 5, 2).astype(np.float32))
        add("grad_top_k", tf.gradients(raw.TopKV2(input=x, k=2).values, x, up_top)[0])
        add("size", raw.Size(input=x))
        add("size_int64", raw.Size(input=i32, out_type=tf.int64))
        add("scatter_nd", raw.ScatterNd(indices=tf.constant([[2], [0], [2]]),
                                        updates=tf.constant(rng.randn(3, 4).astype(np.float32)),
                                        shape=[5, 4]))
        add("scatter_nd_elements", raw.ScatterNd(
            indices=tf.constant([[1, 2], [0, 0]], tf.int64), updates=tf.constant([7, -3]),
            shape=tf.constant([2, 3], tf.int64)))
        # FusedBatchNormV3 in training (running averages with Bessel's
        # correction, an exponential_avg_factor) and inference, NHWC and NCHW,
        # and TF's gradient graphs of it (FusedBatchNormGradV3).
        bx = tf.constant((rng.randn(2, 3, 4, 3) * 2 + 1).astype(np.float32))
        bscale = tf.constant(np.array([1.5, -0.5, 2.0], np.float32))
        boffset = tf.constant(np.array([0.1, 0.0, -1.0], np.float32))
        bmean = tf.constant(np.array([0.5, -1.0, 2.0], np.float32))
        bvar = tf.constant(np.array([1.0, 2.5, 0.5], np.float32))
        bup = tf.constant(rng.randn(2, 3, 4, 3).astype(np.float32))
        empty = tf.zeros([0])
        for fmt in ("NHWC", "NCHW"):
            for training, factor in ((True, 1.0), (True, 0.3), (False, 1.0)):
                tag = f"{fmt}_{'train' if training else 'infer'}_{factor}"
                with_stats = not training or factor != 1.0

                def bn(x, scale, offset):
                    return raw.FusedBatchNormV3(
                        x=x, scale=scale, offset=offset, mean=bmean if with_stats else empty,
                        variance=bvar if with_stats else empty, epsilon=0.001,
                        exponential_avg_factor=factor, data_format=fmt, is_training=training)
                out = bn(bx, bscale, boffset)
                # In inference TF's CPU kernel leaves the reserve spaces unset
                # (whatever the memory held); its gradient does not read them.
                names = ("y", "batch_mean", "batch_variance") + (
                    ("reserve_space_1", "reserve_space_2") if training else ())
                for k, name in enumerate(names):
                    add(f"fused_bn_{tag}_{name}", out[k], FLOAT_TOL)
                grads = tf.gradients(bn(bx, bscale, boffset).y, [bx, bscale, boffset], bup)
                for name, grad in zip(("x", "scale", "offset"), grads):
                    add(f"grad_fused_bn_{tag}_{name}", grad, FLOAT_TOL)
        two_channels = tf1.placeholder_with_default(tf.ones([1, 2, 2, 2]), [None] * 4)
        add("bad_fused_bn_channels", raw.FusedBatchNormV3(
            x=two_channels, scale=bscale, offset=boffset, mean=bmean, variance=bvar,
            is_training=False).y)
        # GatherNd and TF's gradient graphs of GatherNd (ScatterNd) and of
        # ScatterNd (GatherNd).
        gp = tf.constant(rng.randn(3, 2, 4).astype(np.float32))
        gi = tf.constant([[2, 1], [0, 0], [2, 1]])
        add("gather_nd_rows", raw.GatherNd(params=gp, indices=gi))
        add("gather_nd_elements", raw.GatherNd(
            params=i32, indices=tf.constant([[[1, 3], [0, 0]]], tf.int64)))
        add("grad_gather_nd", tf.gradients(raw.GatherNd(params=gp, indices=gi), gp,
                                           tf.constant(rng.randn(3, 4).astype(np.float32)))[0])
        su = tf.constant(rng.randn(3, 4).astype(np.float32))
        add("grad_scatter_nd", tf.gradients(
            raw.ScatterNd(indices=tf.constant([[2], [0], [2]]), updates=su, shape=[5, 4]), su,
            tf.constant(rng.randn(5, 4).astype(np.float32)))[0])
        add("bad_gather_nd_index", raw.GatherNd(
            params=gp, indices=tf1.placeholder_with_default([[3, 0]], [None, 2])))
        # The ops TF's gradients() writes: BiasAddGrad (BiasAdd's), Rank,
        # InvertPermutation (Transpose's), ConcatOffset and ShapeN (ConcatV2's).
        hb = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
        hup = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
        add("bias_add_grad", raw.BiasAddGrad(out_backprop=hb), FLOAT_TOL)
        add("bias_add_grad_int", raw.BiasAddGrad(out_backprop=i32))
        add("grad_bias_add", tf.gradients(raw.BiasAdd(value=hb, bias=tf.constant(
            [1.0, 2.0, 3.0, 4.0])), hb, hup)[0], FLOAT_TOL)
        hbias = tf.constant([1.0, 2.0, 3.0, 4.0])
        add("grad_bias_add_bias", tf.gradients(raw.BiasAdd(value=hb, bias=hbias), hbias, hup)[0],
            FLOAT_TOL)
        add("rank", raw.Rank(input=hb))
        add("rank_unknown", raw.Rank(input=tf1.placeholder_with_default(hb, None)))
        add("invert_permutation", raw.InvertPermutation(x=tf.constant([2, 0, 3, 1])))
        add("grad_transpose", tf.gradients(tf.transpose(hb, [1, 2, 0]), hb,
                                           tf.transpose(hup, [1, 2, 0]))[0])
        hc = [tf.constant(rng.randn(2, k, 3).astype(np.float32)) for k in (1, 4, 2)]
        hcup = tf.constant(rng.randn(2, 7, 3).astype(np.float32))
        for k, grad in enumerate(tf.gradients(tf.concat(hc, 1), hc, hcup)):
            add(f"grad_concat_{k}", grad)
        hp = [tf1.placeholder_with_default(t, [None, None, 3]) for t in hc]
        for k, grad in enumerate(tf.gradients(tf.concat(hp, -2), hp, hcup)):
            add(f"grad_concat_unknown_{k}", grad)
        offs = raw.ConcatOffset(concat_dim=1, shape=[tf.constant([2, 3, 5]),
                                                     tf.constant([2, 4, 5])])
        add("concat_offset_1", offs[1])
        add("shape_n_1", raw.ShapeN(input=[hb, f], out_type=tf.int64)[1])
        add("bad_invert_permutation", raw.InvertPermutation(
            x=tf1.placeholder_with_default([0, 0], [None])))
        add("bad_concat_offset", raw.ConcatOffset(concat_dim=1, shape=[
            tf.constant([2, 3, 5]), tf1.placeholder_with_default([3, 4, 5], [None])])[1])
        # PreventGradient (TF's gradient of sparse softmax cross entropy puts
        # one on the op's backprop output).
        add("prevent_gradient", raw.PreventGradient(input=f, message="why"))
        # FusedBatchNormV3 on 5-D NDHWC / NCDHW data, and its gradient.
        b5 = tf.constant((rng.randn(2, 2, 3, 2, 3) * 2 - 1).astype(np.float32))
        for fmt in ("NDHWC", "NCDHW"):
            scale5 = bscale if fmt == "NDHWC" else bscale[:2]
            offset5 = boffset if fmt == "NDHWC" else boffset[:2]
            out5 = raw.FusedBatchNormV3(x=b5, scale=scale5, offset=offset5, mean=empty,
                                        variance=empty, epsilon=0.01, data_format=fmt)
            add(f"fused_bn_{fmt}_y", out5.y, FLOAT_TOL)
            add(f"fused_bn_{fmt}_batch_variance", out5.batch_variance, FLOAT_TOL)
            add(f"grad_fused_bn_{fmt}_x", tf.gradients(out5.y, b5, b5 * 0.5 + 1.0)[0], FLOAT_TOL)
        add("bad_scatter_nd_index", raw.ScatterNd(
            indices=tf1.placeholder_with_default([[5]], [None, 1]),
            updates=tf.constant([1.0]), shape=[5]))
        add("bad_top_k_past_row", raw.TopKV2(input=f, k=tf1.placeholder_with_default(5, [])).values)
        add("bad_unpack_num", raw.Unpack(value=tf1.placeholder_with_default(u, [None, 3, 4]),
                                         num=3)[0])
        add("bad_ss_shrink_oob", raw.StridedSlice(
            input=xs, begin=tf1.placeholder_with_default([7], [None]), end=[8], strides=[1],
            shrink_axis_mask=1))
        add("bad_range_delta0", raw.Range(start=0, limit=5,
                                          delta=tf1.placeholder_with_default(0, [])))
        add("bad_range_direction", raw.Range(start=0, limit=5,
                                             delta=tf1.placeholder_with_default(-1, [])))
        add("bad_tile_negative", raw.Tile(input=i32, multiples=tf1.placeholder_with_default(
            [1, -1], [None])))
        add("bad_fill_negative", raw.Fill(dims=tf1.placeholder_with_default([2, -3], [None]),
                                          value=1.0))
        # Refused by TF at run time (values through PlaceholderWithDefault).
        zero = tf1.placeholder_with_default(np.array([1, 0, 1, 1], np.int32), [None])
        add("bad_floordiv_zero", raw.FloorDiv(x=i32, y=zero))
        add("bad_floormod_zero", raw.FloorMod(x=i32, y=zero))
        # Ops of TF's own TF1 graphs (the op-coverage report, issue 39).
        pos = tf.constant((np.abs(rng.randn(3, 4)) + 0.1).astype(np.float32))
        # Float kernels where TF's packets approximate (a reciprocal estimate
        # and a Newton step; Eigen's packet log): within FLOAT_TOL.
        add("reciprocal", raw.Reciprocal(x=f), FLOAT_TOL)
        add("reciprocal_f64", raw.Reciprocal(x=f64), FLOAT_TOL)
        add("grad_reciprocal", tf.gradients(raw.Reciprocal(x=f), f, f * 0.5)[0], FLOAT_TOL)
        add("log1p", raw.Log1p(x=pos - 0.05), FLOAT_TOL)
        add("log1p_tiny", raw.Log1p(x=tf.constant([1e-10, -1e-7, 3e-8, 0.0], tf.float32)),
            FLOAT_TOL)
        add("grad_log1p", tf.gradients(raw.Log1p(x=pos), pos, f)[0], FLOAT_TOL)
        dz = tf.constant([[0.0, 2.0, -0.0, 4.0]])
        add("div_no_nan", raw.DivNoNan(x=f, y=dz))
        add("div_no_nan_nan_x", raw.DivNoNan(x=tf.constant([np.nan, np.inf, 1.0]),
                                            y=tf.constant([0.0, 0.0, 0.0])))
        dxn = tf.gradients(raw.DivNoNan(x=f, y=dz), [f, dz], f)
        add("grad_div_no_nan_x", dxn[0], FLOAT_TOL)
        add("grad_div_no_nan_y", dxn[1], FLOAT_TOL)
        add("l2_loss", raw.L2Loss(t=f), FLOAT_TOL)
        add("l2_loss_f64", raw.L2Loss(t=f64), FLOAT_TOL)
        add("grad_l2_loss", tf.gradients(raw.L2Loss(t=f), f, tf.constant(0.5))[0], FLOAT_TOL)
        bb = raw.Greater(x=f, y=-1.0)
        add("all", raw.All(input=bb, axis=[1]))
        add("all_keep", raw.All(input=bb, axis=[0], keep_dims=True))
        add("any", raw.Any(input=raw.Greater(x=f, y=4.0), axis=[-1]))
        add("any_all_axes", raw.Any(input=bb, axis=[0, 1]))
        add("all_empty", raw.All(input=tf.zeros([0, 3], tf.bool), axis=[0]))
        add("any_empty", raw.Any(input=tf.zeros([0, 3], tf.bool), axis=[0]))
        refvar = tf1.Variable(tf.zeros([2]), use_resource=False, name="never_initialized")
        add("is_variable_initialized", raw.IsVariableInitialized(ref=refvar))
        with tf.control_dependencies([raw.Assert(condition=raw.All(input=bb, axis=[0, 1]) | True,
                                                 data=[f])]):
            add("assert_passes", tf.identity(f))
        with tf.control_dependencies([raw.Assert(
                condition=tf1.placeholder_with_default(False, []),
                data=[tf.constant("x > 0 \"q\"\n"), i32, tf.constant(2.5), d64,
                      tf.constant([True, False]), tf.constant([0.1, 1.0 / 3]), tf.range(9),
                      tf.zeros([2, 0, 3]), tf.constant(7, tf.int64, [2, 1, 4])],
                summarize=5)]):
            add("bad_assert_fails", tf.identity(f))
        # TF's Philox normals, bit for bit with fixed seeds (one run each).
        for dt in (tf.float32, tf.float64, tf.half, tf.bfloat16):
            for shape in ([3, 5], [7]):
                tag = f"{dt.name}_{len(shape)}"
                add(f"random_normal_{tag}", raw.RandomStandardNormal(
                    shape=shape, dtype=dt, seed=87654321, seed2=len(shape)))
                add(f"truncated_normal_{tag}", raw.TruncatedNormal(
                    shape=shape, dtype=dt, seed=1234, seed2=len(shape) + 7))
        add("truncated_normal_large", raw.TruncatedNormal(
            shape=tf.constant([300, 20], tf.int64), dtype=tf.float32, seed=5, seed2=9))
        add("truncated_normal_tf_initializer", tf1.truncated_normal_initializer(
            stddev=0.1, seed=3)([40, 10]))
        add("where_bool", raw.Where(condition=raw.Greater(x=f, y=0.0)))
        add("where_int", raw.Where(condition=tf.constant([[[0, 3], [2, 0]], [[0, 0], [0, -1]]])))
        add("where_float_none", raw.Where(condition=tf.zeros([2, 3])))
        add("bad_where_scalar", raw.Where(condition=tf.constant(True)))
        add("where_vector_f64", raw.Where(condition=tf.constant([0.0, -0.0, 2.0, np.nan])))
        soft = tf.nn.softmax(tf.constant(rng.randn(3, 4).astype(np.float32)))
        xent = raw.SoftmaxCrossEntropyWithLogits(features=f, labels=soft)
        add("softmax_xent_loss", xent.loss, FLOAT_TOL)
        add("softmax_xent_backprop", xent.backprop, FLOAT_TOL)
        xent_b = raw.SoftmaxCrossEntropyWithLogits(features=f64[:, :4],
                                                   labels=tf.constant([[0.0, 1.0, 0.0, 0.0]], tf.float64))
        add("softmax_xent_broadcast_loss", xent_b.loss, FLOAT_TOL)
        add("softmax_xent_broadcast_backprop", xent_b.backprop, FLOAT_TOL)
        add("grad_softmax_xent_v1", tf.gradients(
            tf1.nn.softmax_cross_entropy_with_logits(labels=soft, logits=f), f,
            tf.constant([1.0, 2.0, -1.0]))[0], FLOAT_TOL)
        add("bad_softmax_xent_shapes", raw.SoftmaxCrossEntropyWithLogits(
            features=f, labels=tf1.placeholder_with_default(tf.zeros([3, 3]), [None, None])).loss)
        # TF1's Gather and FusedBatchNorm (v1) with its gradient op.
        emb = tf.constant(rng.randn(5, 3).astype(np.float32))
        ids = tf.constant([[4, 0], [2, 2]], tf.int64)
        add("legacy_gather", raw.Gather(params=emb, indices=ids))
        add("legacy_gather_int", raw.Gather(params=i32, indices=tf.constant([1, 0, 1])))
        add("grad_legacy_gather", tf.convert_to_tensor(
            tf.gradients(raw.Gather(params=emb, indices=ids), emb,
                         tf.constant(rng.randn(2, 2, 3).astype(np.float32)))[0]))
        add("bad_legacy_gather_index", raw.Gather(
            params=emb, indices=tf1.placeholder_with_default([5], [None])))
        x4 = tf.constant((rng.randn(2, 3, 2, 4) * 2 + 1).astype(np.float32))
        for fmt, ch in (("NHWC", 4), ("NCHW", 3)):
            sc = tf.constant(rng.rand(ch).astype(np.float32) + 0.5)
            of = tf.constant(rng.randn(ch).astype(np.float32))
            mu = tf.constant(rng.randn(ch).astype(np.float32))
            var = tf.constant(rng.rand(ch).astype(np.float32) + 0.5)
            for training in (True, False):
                out = raw.FusedBatchNorm(x=x4, scale=sc, offset=of,
                                         mean=mu if not training else tf.zeros([0]),
                                         variance=var if not training else tf.zeros([0]),
                                         epsilon=0.001, data_format=fmt, is_training=training)
                tag = f"{fmt}_{'train' if training else 'infer'}"
                add(f"fused_bn_v1_{tag}_y", out.y, FLOAT_TOL)
                if training:
                    for k, o in enumerate(out[1:]):
                        add(f"fused_bn_v1_{tag}_{k + 1}", o, FLOAT_TOL)
                grads = tf.gradients(out.y, [x4, sc, of], x4 * 0.5 - 1.0)
                for k, grad in enumerate(grads):
                    add(f"grad_fused_bn_v1_{tag}_{k}", grad, FLOAT_TOL)
        add("bad_random_normal_negative", raw.RandomStandardNormal(
            shape=tf1.placeholder_with_default([2, -1], [None]), dtype=tf.float32, seed=1))
    return g, cases


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    g, cases = build_cases()
    meta = os.path.join(work, "cases.meta")
    with g.as_default():
        tf1.train.export_meta_graph(filename=meta)
    want = {}
    with tf1.Session(graph=g) as sess:
        for name, (tensor, _) in cases.items():
            try:
                want[name] = sess.run(tensor)
            except tf.errors.OpError as e:
                want[name] = e
    plan = [f"run {name} {tensor.name} |" for name, (tensor, _) in cases.items()]
    results = run_driver(driver, meta, "-", "-", plan, os.path.join(work, "eager_out"))
    tally = Tally()
    for name, (tensor, tol) in cases.items():
        got = results.get(name, {})
        if isinstance(want[name], Exception):
            problem = None if ".error" in got else f"TF refuses ({type(want[name]).__name__}), " \
                f"eager computed {got.get(tensor.name)!r}"
            # Assert's message is TF's, data summarized as TF does.
            if problem is None and name.startswith("bad_assert"):
                message = want[name].message
                text = message[message.index("assertion failed"):].split("\n\t")[0]
                problem = None if text in got[".error"] else \
                    f"eager's error {got['.error']!r} lacks TF's {text!r}"
            tally.check(name, problem)
        elif ".error" in got:
            tally.check(name, f"eager refused what TF computes: {got['.error']}")
        else:
            tally.check(name, mismatch(name, got[tensor.name], want[name], tol))
    sys.exit(tally.finish())


if __name__ == "__main__":
    main()
