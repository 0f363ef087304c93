"""Every attribute and input of the ops eager runs from a graph, judged by TF.

  op_attrs_test.py driver=build/tests/tf_graphs/graph_run_driver work=DIR

One TF1 graph holds a case per attribute value that changes a result
(GatherV2's axis and batch_dims, OneHot's axis, reductions' keep_dims and
negative axes, ArgMax's output_type, MatMul's transposes, Conv2D's strides
and dilations, ...), on constants. TF computes each case; eager's
graph_run_driver imports the exported .meta and runs each case on its own.
A case TF computes must come out of eager equal (bit for bit for integers
and exact ops, within 1e-5 of the scale for the float kernels whose
summation order may differ); a case TF refuses at run time (an axis out of
range, an index out of range, a shape whose size overflows) must be
refused by eager too (an error, never a value); a case eager does not
implement (EAGER_REFUSES) must be refused naming what it lacks.
"""

import os
import shutil
import sys

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, run_driver, tf, tf1

FLOAT_TOL = 1e-5


def build_cases():
    """{case name: (tensor, tolerance)} in a new graph, and the graph."""
    g = tf.Graph()
    cases = {}
    rng = np.random.RandomState(27)

    def add(name, tensor, tol=0):
        cases[name] = (tf.identity(tensor, name=name), tol)

    with g.as_default():
        p33 = tf.constant(np.arange(9, dtype=np.float32).reshape(3, 3))
        p234 = tf.constant(np.arange(24, dtype=np.int32).reshape(2, 3, 4))
        f234 = tf.constant(rng.randn(2, 3, 4).astype(np.float32))
        add("gather_axis1", tf.gather(p33, [2], axis=1))
        add("gather_axis0", tf.gather(p33, [[2, 0], [1, 1]], axis=0))
        add("gather_axis_neg1", tf.gather(p234, [[3, 0, 1]], axis=-1))
        add("gather_axis1_int64", tf.gather(p234, tf.constant([2, 0], tf.int64),
                                            axis=tf.constant(1, tf.int64)))
        add("gather_batch1_axis1",
            tf.gather(p234, [[2, 0], [1, 1]], axis=1, batch_dims=1))
        add("gather_batch1_axis2",
            tf.gather(p234, [[3, 0, 1, 1, 2], [0, 0, 3, 2, 1]], axis=2, batch_dims=1))
        add("gather_batch_neg1",
            tf.gather(p234, [[2, 0], [1, 1]], axis=1, batch_dims=-1))
        add("gather_batch2_axis2",
            tf.gather(p234, np.array([[1, 2, 3], [0, 1, 2]], np.int32)[:, :, None],
                      axis=2, batch_dims=2))
        idx = tf.constant([[0, 2, -1], [3, 1, 7]], tf.int32)
        add("one_hot_last", tf.one_hot(idx, 4, on_value=5.0, off_value=-1.0))
        add("one_hot_axis0", tf.one_hot(idx, 4, axis=0, dtype=tf.int32))
        add("one_hot_axis1", tf.one_hot(idx, 4, axis=1, on_value=2.0, off_value=0.5,
                                        dtype=tf.float64))
        add("one_hot_int64_vector", tf.one_hot(tf.constant([1, 0, 5], tf.int64), 3, axis=0))
        add("sum_keep_neg", tf.reduce_sum(f234, axis=-1, keepdims=True), FLOAT_TOL)
        add("sum_int", tf.reduce_sum(p234, axis=[0, 2]))
        add("mean_two_axes", tf.reduce_mean(f234, axis=[0, -1]), FLOAT_TOL)
        add("max_keep", tf.reduce_max(f234, axis=1, keepdims=True))
        add("min_neg_keep", tf.reduce_min(f234, axis=[-1, 0], keepdims=True))
        add("min_int", tf.reduce_min(p234 - 7, axis=1))
        add("prod_keep", tf.reduce_prod(f234, axis=[0, 2], keepdims=True), FLOAT_TOL)
        i34 = tf.constant(np.arange(1, 13, dtype=np.int64).reshape(3, 4))
        add("prod_int64_axis", tf.reduce_prod(i34, axis=tf.constant([1], tf.int64)))
        add("prod_zeros", tf.reduce_prod(tf.constant([[0.0, 2.0], [3.0, -0.5]]), axis=0))
        add("prod_no_axes", tf.reduce_prod(f234, axis=tf.constant([], tf.int32)))
        add("argmax_int32", tf.argmax(f234, axis=-1, output_type=tf.int32))
        add("argmax_int64", tf.argmax(f234, axis=0))
        f231 = tf.constant(rng.randn(2, 3, 1).astype(np.float32))
        add("concat_neg", tf.concat([f234, f234 * 2.0, f231], axis=-1))
        add("slice_minus1", tf.slice(p234, [1, 1, 0], [-1, 2, -1]))
        add("transpose", tf.transpose(p234, [2, 0, 1]))
        add("squeeze_dims", tf.squeeze(tf.constant(np.ones((2, 1, 3, 1), np.float32)), [1]))
        add("squeeze_all", tf.squeeze(tf.constant(np.ones((1, 2, 1), np.int32))))
        a = tf.constant(rng.randn(3, 4).astype(np.float32))
        b = tf.constant(rng.randn(5, 4).astype(np.float32))
        add("matmul_tb", tf.matmul(a, b, transpose_b=True), FLOAT_TOL)
        add("matmul_ta", tf.matmul(a, a, transpose_a=True), FLOAT_TOL)
        d = tf.constant(rng.randn(4, 3).astype(np.float32))
        add("matmul_ta_tb", tf.matmul(d, b, transpose_a=True, transpose_b=True), FLOAT_TOL)
        add("cast_to_int", tf.cast(f234 * 3.0, tf.int32))
        add("cast_to_float64", tf.cast(p234, tf.float64))
        add("cast_to_bool", tf.cast(p234 - 3, tf.bool))
        add("reshape_minus1", tf.reshape(p234, [-1, 6]))
        add("broadcast_to", tf.broadcast_to(tf.constant([[1], [2]], tf.int32), [3, 2, 4]))
        add("segment_sum", tf.math.unsorted_segment_sum(
            p234, tf.constant([[0, 2, 0], [3, 3, 1]], tf.int32), 5))
        add("segment_sum_negative_dropped", tf.math.unsorted_segment_sum(
            tf.constant([1.0, 2.0, 4.0]), tf.constant([0, -1, 1], tf.int64), 2))
        img = tf.constant(rng.randn(2, 7, 6, 3).astype(np.float32))
        k = tf.constant(rng.randn(3, 2, 3, 4).astype(np.float32))
        add("conv_same_s2", tf.nn.conv2d(img, k, strides=[1, 2, 2, 1], padding="SAME"),
            FLOAT_TOL)
        add("conv_valid_s1x2", tf.nn.conv2d(img, k, strides=[1, 1, 2, 1], padding="VALID"),
            FLOAT_TOL)
        add("conv_dilated", tf.nn.conv2d(img, k, strides=1, padding="SAME", dilations=[1, 2, 1, 1]),
            FLOAT_TOL)
        add("max_pool_same", tf.nn.max_pool2d(img, ksize=[1, 3, 2, 1], strides=[1, 2, 2, 1],
                                              padding="SAME"))
        add("max_pool_valid", tf.nn.max_pool2d(img, ksize=2, strides=[1, 1, 3, 1],
                                               padding="VALID"))
        add("avg_pool_same", tf.nn.avg_pool2d(img, ksize=[1, 3, 2, 1], strides=[1, 2, 2, 1],
                                              padding="SAME"), FLOAT_TOL)
        add("avg_pool_valid", tf.nn.avg_pool2d(img, ksize=2, strides=[1, 1, 3, 1],
                                               padding="VALID"), FLOAT_TOL)
        add("avg_pool_grad_same", tf.raw_ops.AvgPoolGrad(
            orig_input_shape=tf.constant([2, 7, 6, 3]), grad=tf.constant(
                rng.randn(2, 4, 3, 3).astype(np.float32)), ksize=[1, 3, 2, 1],
            strides=[1, 2, 2, 1], padding="SAME"), FLOAT_TOL)
        dw = tf.constant(rng.randn(3, 2, 3, 2).astype(np.float32))
        add("depthwise_same_s2", tf.raw_ops.DepthwiseConv2dNative(
            input=img, filter=dw, strides=[1, 2, 2, 1], padding="SAME"), FLOAT_TOL)
        add("depthwise_valid_s1x2", tf.raw_ops.DepthwiseConv2dNative(
            input=img, filter=dw, strides=[1, 1, 2, 1], padding="VALID"), FLOAT_TOL)
        dw_grad = tf.constant(rng.randn(2, 4, 3, 6).astype(np.float32))
        add("depthwise_backprop_input", tf.raw_ops.DepthwiseConv2dNativeBackpropInput(
            input_sizes=tf.constant([2, 7, 6, 3]), filter=dw, out_backprop=dw_grad,
            strides=[1, 2, 2, 1], padding="SAME"), FLOAT_TOL)
        add("depthwise_backprop_filter", tf.raw_ops.DepthwiseConv2dNativeBackpropFilter(
            input=img, filter_sizes=tf.constant([3, 2, 3, 2]), out_backprop=dw_grad,
            strides=[1, 2, 2, 1], padding="SAME"), FLOAT_TOL)
        add("bias_add", tf.nn.bias_add(img, tf.constant([1.0, -2.0, 0.5])))
        add("softmax", tf.nn.softmax(f234), FLOAT_TOL)
        add("log_softmax", tf.nn.log_softmax(f234), FLOAT_TOL)
        add("xent", tf.nn.sparse_softmax_cross_entropy_with_logits(
            labels=tf.constant([1, 0, 3], tf.int64),
            logits=tf.constant(rng.randn(3, 4).astype(np.float32))), FLOAT_TOL)
        add("maximum_bcast", tf.maximum(f234, tf.constant([0.0, 0.5, -0.5, 1.0])))
        add("equal_bcast", tf.equal(p234, tf.constant([[0], [5], [10]], tf.int32)))
        add("pow_int", tf.pow(p234, 2))
        # Refused by TF at run time: the values come through a
        # PlaceholderWithDefault, which TF's shape functions cannot see.
        axis5 = tf1.placeholder_with_default(np.int32(5), [])
        add("bad_gather_axis", tf.gather(p33, [0], axis=axis5))
        add("bad_gather_index", tf.gather(p33, tf1.placeholder_with_default([3], [None])))
        min64 = tf1.placeholder_with_default(np.array([-2**63], np.int64), [None])
        add("bad_sum_axis_min64", tf.reduce_sum(f234, axis=min64))
        add("bad_prod_axis", tf.reduce_prod(f234, axis=tf1.placeholder_with_default([3], [None])))
        add("bad_argmax_axis", tf.argmax(f234, axis=tf1.placeholder_with_default(np.int32(3), [])))
        huge = tf1.placeholder_with_default(np.array([2**62, 4], np.int64), [None])
        add("bad_reshape_overflow", tf.reshape(p234, huge))
        add("bad_concat_axis", tf.concat([p234, p234], axis=tf1.placeholder_with_default(3, [])))
        add("bad_slice", tf.slice(p234, tf1.placeholder_with_default([0, 0, 2], [None]),
                                  [1, 1, 3]))
        img_nchw = tf.constant(rng.randn(2, 3, 7, 6).astype(np.float32))
        add("bad_conv_nchw", tf.nn.conv2d(img_nchw, k, strides=1, padding="SAME",
                                          data_format="NCHW"))
        add("bad_segment_id", tf.math.unsorted_segment_sum(
            p234, tf1.placeholder_with_default(np.array([0, 9], np.int32), [None]), 5))
    return g, cases


# Cases TF computes and eager refuses, naming what it lacks: an honest
# refusal (UnimplementedError or a dtype eager's kernel lacks), not a value.
EAGER_REFUSES = {
    "pow_int": "Pow: x has dtype int32",
    "bad_conv_nchw": "has data_format 'NCHW'; eager computes only NHWC",
}


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
    refused = 0
    for name, (tensor, tol) in cases.items():
        got = results.get(name, {})
        if isinstance(want[name], Exception):
            refused += 1
            problem = None if ".error" in got else f"TF refuses ({type(want[name]).__name__}), " \
                f"eager computed {got.get(tensor.name)!r}"
            tally.check(name, problem)
        elif name in EAGER_REFUSES:
            error = got.get(".error", "")
            tally.check(name, None if EAGER_REFUSES[name] in error else
                        f"eager should refuse with '{EAGER_REFUSES[name]}', got {error or got!r}")
        elif ".error" in got:
            tally.check(name, f"eager refused what TF computes: {got['.error']}")
        else:
            tally.check(name, mismatch(name, got[tensor.name], want[name], tol))
    if refused < 8:
        tally.check("refusals", f"only {refused} cases are refused by TF; the test expects 8+")
    sys.exit(tally.finish())


if __name__ == "__main__":
    main()
