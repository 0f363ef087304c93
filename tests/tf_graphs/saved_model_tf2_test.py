"""TF 2 SavedModels, written by TF 2.21 and run by eager (issue 39).

  saved_model_tf2_test.py driver=build/tests/tf_graphs/saved_model_tf2_driver work=DIR

TF saves (1) a tf.Module with four tf.Variables and a
@tf.function(input_signature=...) computing a 2-layer MLP (MatMul, BiasAdd,
Relu) with tf.saved_model.save, and (2) a Keras 3 Sequential of two Dense
layers with model.export(), and a Keras 3 model of EinsumDense and
MultiHeadAttention layers (Einsum and BatchMatMulV2 nodes) exported so.
Their computation lives in the function library (StatefulPartitionedCall of __inference_... functions, variables
captured as resource handles). eager's driver loads each with
LoadSavedModel, runs the "serving_default" signature by its input names,
and its outputs must equal those of TF's own
tf.saved_model.load(dir).signatures["serving_default"] within 1e-5 *
max(1, max|TF|). (3) A tf.function with tf.cond and tf.while_loop (If and
While nodes whose branches, cond and body are library functions, a
variable captured into the loop body) runs as TF's for both branches and 0
or more iterations. (4) tf.switch_case (Case, StatelessCase) runs the
branch TF runs, the last one for an index out of range. (5) A variable
assigned inside the function
(AssignAddVariableOp on the captured handle, then read) gives TF's result.
(6) A tf_keras (Keras 2) CNN with BatchNormalization, exported with
model.export(): its FusedBatchNormV3 nodes (inference) are folded into the
convolutions by eager's Session (ops/internal/graph_fusion.h), which must
say so (the driver's .fused_nodes) and still give TF's values.
(7) tf.TensorArray in a tf.while_loop (unstack, read, size, write with
dynamic_size, stack, gather, split, concat): TensorList ops in the library.
(8) Keras 3 LSTM, GRU and SimpleRNN layers (return_sequences both ways,
go_backwards), exported with model.export() and saved with
tf.saved_model.save: While loops over TensorLists, ReverseV2. Both judged
within the same 1e-5 * max(1, max|TF|). (9) A tf.Module's non-signature
tf.functions (__call__, and a method traced for two shapes, capturing
variables) called through SavedModelBundle::Function by argument name and
positionally give TF's outputs; a shape no trace takes is refused by both.
(10) Gradients: a tf.Module whose
signature calls a nested tf.function and a tf.cond, variables read inside
both; eager::Gradients of sum(y^2) with respect to the loaded variables
(through the StatefulPartitionedCalls and the If, for each branch) equal
tf.GradientTape's on TF's own load, within the same tolerance; then eager
fine-tunes them (TF1 GradientDescent Minimize, 3 steps of sum(y^2)) to TF's
own gradient descent on its load, and saves a checkpoint that TF reads
back bit for bit.
"""

import os
import shutil
import subprocess

import numpy as np

from tfgraph import Tally, driver_arg, mismatch, read_bundle, tf, tf1, write_bundle

# tfgraph sets TF1's reference variables and control flow v1 for its graph
# tests; these SavedModels are TF 2's defaults.
tf1.enable_resource_variables()
tf1.enable_control_flow_v2()

TOL = 1e-5
FINETUNE_STEPS = 3
FINETUNE_LR = 0.01


class Mlp(tf.Module):
    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(39)
        self.w1 = tf.Variable(rng.randn(3, 5).astype(np.float32), name="w1")
        self.b1 = tf.Variable(rng.randn(5).astype(np.float32), name="b1")
        self.w2 = tf.Variable(rng.randn(5, 2).astype(np.float32), name="w2")
        self.b2 = tf.Variable(rng.randn(2).astype(np.float32), name="b2")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, self.w1), self.b1))
        return {"y": tf.nn.bias_add(tf.matmul(h, self.w2), self.b2)}


class Tunable(tf.Module):
    """For gradients: a nested tf.function and a tf.cond, variables read
    inside both."""

    def __init__(self):
        super().__init__()
        rng = np.random.RandomState(40)
        self.w1 = tf.Variable(rng.randn(3, 4).astype(np.float32), name="w1")
        self.b1 = tf.Variable(rng.randn(4).astype(np.float32), name="b1")
        self.w2 = tf.Variable(rng.randn(4, 2).astype(np.float32), name="w2")

    @tf.function
    def hidden(self, x):
        return tf.nn.tanh(tf.matmul(x, self.w1) + self.b1)

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        h = self.hidden(x)
        h = tf.cond(tf.reduce_mean(x) > 0.0, lambda: h * self.b1, lambda: h + 1.0)
        return {"y": tf.matmul(h, self.w2)}


def check_gradients(tally, driver, export_dir, work, inputs):
    """eager::Gradients of sum(y^2) through the loaded signature (calls, If)
    equal tf.GradientTape's on TF's own load of the SavedModel."""
    loaded = tf.saved_model.load(export_dir)
    fn = loaded.signatures["serving_default"]
    with tf.GradientTape() as tape:
        loss = tf.reduce_sum(tf.square(fn(x=tf.constant(inputs))["y"]))
    variables = [loaded.w1, loaded.b1, loaded.w2]
    want = [g.numpy() for g in tape.gradient(loss, variables)]
    feeds = os.path.join(work, "tunable.feeds")
    out = os.path.join(work, "tunable.out")
    write_bundle(feeds, {"x": inputs})
    proc = subprocess.run([driver, export_dir, "serving_default", feeds, out,
                           f"--finetune={FINETUNE_STEPS}:{FINETUNE_LR}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"driver failed ({proc.returncode}): {proc.stderr.strip()}")
    got = read_bundle(out)
    if ".error" in got:
        tally.check("SavedModel gradients", "eager: " + got[".error"])
        return
    # eager names variables by their VarHandleOp nodes: matched by value.
    eager_nodes = {}
    for variable, grad in zip(variables, want):
        nodes = [k[len("value/"):] for k, v in got.items()
                 if k.startswith("value/") and np.array_equal(v, variable.numpy())]
        name = variable.name
        if len(nodes) != 1 or "grad/" + nodes[0] not in got:
            tally.check(f"SavedModel gradient of {name}", f"eager has no gradient for it ({nodes})")
            continue
        tally.check(f"SavedModel gradient of {name}",
                    mismatch(name, got["grad/" + nodes[0]], grad, TOL))
        print(f"SavedModel gradient of {name} (eager's '{nodes[0]}'): max |eager - TF| = "
              f"{float(np.max(np.abs(got['grad/' + nodes[0]] - grad))):.3g}", flush=True)
        eager_nodes[name] = nodes[0]
    # Fine-tuning: TF's gradient descent on its own load, step for step.
    for _ in range(FINETUNE_STEPS):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.square(fn(x=tf.constant(inputs))["y"]))
        for variable, grad in zip(variables, tape.gradient(loss, variables)):
            variable.assign_sub(FINETUNE_LR * grad)
    reader = tf.train.load_checkpoint(out + ".ckpt")  # TF reads eager's checkpoint
    for variable in variables:
        node = eager_nodes.get(variable.name)
        if node is None:
            continue
        tuned = got.get("tuned/" + node)
        tally.check(f"SavedModel fine-tuned {variable.name}",
                    mismatch(variable.name, tuned, variable.numpy(), TOL))
        tally.check(f"TF restores eager's fine-tuned {variable.name}",
                    mismatch(variable.name, reader.get_tensor(node), tuned, 0))
        print(f"SavedModel fine-tuned {variable.name}: max |eager - TF| = "
              f"{float(np.max(np.abs(tuned - variable.numpy()))):.3g}", flush=True)


class Loop(tf.Module):
    """tf.cond and tf.while_loop: StatelessIf/If and While in the library,
    a variable captured into the loop body as a handle."""

    def __init__(self):
        super().__init__()
        self.scale = tf.Variable(np.float32(0.75), name="scale")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                  tf.TensorSpec([], tf.int32, name="n")])
    def __call__(self, x, n):
        y = tf.cond(tf.reduce_sum(x) > 0, lambda: x * 2.0, lambda: -x)
        i = tf.constant(0)
        _, acc = tf.while_loop(lambda i, acc: i < n,
                               lambda i, acc: (i + 1, acc * self.scale + 1.0), [i, y])
        return {"y": y, "acc": acc}


class Counter(tf.Module):
    """A variable assigned inside the function: AssignAddVariableOp on the
    captured handle, then a read ordered after it (automatic control
    dependencies)."""

    def __init__(self):
        super().__init__()
        self.count = tf.Variable(np.float32(1.5), name="count")

    @tf.function(input_signature=[tf.TensorSpec([], tf.float32, name="delta")])
    def __call__(self, delta):
        self.count.assign_add(delta)
        return {"doubled": self.count.read_value() * 2.0}


class Switch(tf.Module):
    """tf.switch_case: a StatelessCase and a Case (a branch reads a captured
    variable) whose branches are library functions; an index out of range
    runs the last branch."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.float32(1.5), name="w")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                  tf.TensorSpec([], tf.int32, name="i")])
    def __call__(self, x, i):
        y = tf.switch_case(i, [lambda: x * 2.0, lambda: -x, lambda: tf.square(x)])
        z = tf.switch_case(i, [lambda: x * self.w, lambda: x + 1.0])
        return {"y": y, "z": z}


class ArrayLoop(tf.Module):
    """tf.TensorArray inside a tf.function (TensorList ops in the library):
    unstack, read and size of one array in a tf.while_loop, write to another
    of dynamic size, then stack, gather, read and size after the loop; split
    and concat (TensorListSplit, TensorListConcatV2)."""

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x"),
                                  tf.TensorSpec([], tf.int32, name="n")])
    def __call__(self, x, n):
        rows = tf.TensorArray(tf.float32, size=tf.shape(x)[0], element_shape=[3]).unstack(x)
        out = tf.TensorArray(tf.float32, size=0, dynamic_size=True, element_shape=[3])

        def body(i, out):
            row = rows.read(i % rows.size())
            return i + 1, out.write(i, row * tf.cast(i + 1, tf.float32))

        _, out = tf.while_loop(lambda i, out: i < n, body, [tf.constant(0), out])
        parts = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(
            x, tf.stack([1, tf.shape(x)[0] - 1]))
        return {"stack": out.stack(), "size": out.size(), "gather": out.gather([n - 1, 0]),
                "first": out.read(0), "concat": parts.concat() * 2.0}


class Methods(tf.Module):
    """Non-signature tf.functions, called by eager's SavedModelBundle::Function:
    __call__ (one trace, a dict out) and `scale`, traced twice (float32 [2]
    and [2, 2]), capturing two variables (one int32)."""

    def __init__(self):
        super().__init__()
        self.w = tf.Variable(np.array([[1, -2], [0.5, 3], [2, 1]], np.float32), name="w")
        self.k = tf.Variable(np.float32(0.75), name="k")
        self.n = tf.Variable(np.int32(3), name="n")

    @tf.function(input_signature=[tf.TensorSpec([None, 3], tf.float32, name="x")])
    def __call__(self, x):
        return {"y": tf.matmul(x, self.w) * self.k}

    @tf.function
    def scale(self, a, b):
        return a * self.k + tf.cast(b * self.n, tf.float32)


def saved_methods(export_dir):
    m = Methods()
    for shape in ([2], [2, 2]):
        m.scale.get_concrete_function(tf.TensorSpec(shape, tf.float32, name="a"),
                                      tf.TensorSpec([], tf.int32, name="b"))
    tf.saved_model.save(m, export_dir)


def check_function(tally, driver, export_dir, work, name, path, inputs, positional):
    """eager's model.Function(path) against TF's loaded.<path>(...)."""
    loaded = tf.saved_model.load(export_dir)
    fn = getattr(loaded, path)
    args = [tf.constant(v) for _, v in sorted(inputs.items())]
    want = fn(*args)
    want = ({k: v.numpy() for k, v in want.items()} if isinstance(want, dict)
            else {"output_0": want.numpy()})
    if positional:
        feeds = {str(i): v for i, (_, v) in enumerate(sorted(inputs.items()))}
        got = run_eager(driver, export_dir, "positional:" + path, feeds, work, name)
    else:
        got = run_eager(driver, export_dir, "function:" + path, inputs, work, name)
    if ".error" in got:
        tally.check(name, "eager: " + got[".error"])
        return
    got.pop(".fused_nodes")
    tally.check(f"{name} output keys", None if sorted(got) == sorted(want)
                else f"eager {sorted(got)}, TF {sorted(want)}")
    for key in sorted(want):
        if key in got:
            tally.check(f"{name} {key}", mismatch(key, got[key], want[key], TOL))


def keras_rnn(export_dir, saved_model_dir):
    """Keras 3 LSTM, GRU and SimpleRNN layers, each with and without
    return_sequences and go_backwards, over a time dimension unknown until
    run time: their time loops are While loops over TensorLists. Exported
    with model.export() and saved with tf.saved_model.save."""
    import keras  # Keras 3, imported only here
    keras.utils.set_random_seed(39)
    seq = keras.Input((None, 3), name="seq")
    h = keras.layers.LSTM(4, return_sequences=True)(seq)
    outputs = [
        keras.layers.GRU(3, go_backwards=True)(h),
        keras.layers.SimpleRNN(2, return_sequences=True, go_backwards=True)(seq),
        keras.layers.LSTM(2, go_backwards=True, return_sequences=True)(seq),
        keras.layers.GRU(2, return_sequences=True)(seq),
        keras.layers.SimpleRNN(3)(h),
    ]
    model = keras.Model(seq, outputs)
    model.export(export_dir, verbose=False)
    tf.saved_model.save(model, saved_model_dir)


def library_ops(export_dir):
    """The op types of the serving signature's graph and its library."""
    graph = tf.saved_model.load(export_dir).signatures["serving_default"].graph.as_graph_def()
    ops = {node.op for node in graph.node}
    for f in graph.library.function:
        ops |= {node.op for node in f.node_def}
    return ops


def keras_sequential(export_dir):
    import keras  # Keras 3, imported only here
    keras.utils.set_random_seed(39)
    model = keras.Sequential([keras.Input((3,), name="features"),
                              keras.layers.Dense(4, activation="relu"),
                              keras.layers.Dense(2)])
    model.export(export_dir, verbose=False)


def keras_attention(export_dir):
    """Keras 3's EinsumDense and MultiHeadAttention, whose graphs are Einsum ops."""
    import keras  # Keras 3, imported only here
    keras.utils.set_random_seed(39)
    tokens = keras.Input((5, 4), name="tokens")
    h = keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 6), bias_axes="d")(tokens)
    h = keras.layers.MultiHeadAttention(num_heads=2, key_dim=3)(h, h)
    model = keras.Model(tokens, keras.layers.EinsumDense("abc,cd->abd", output_shape=(None, 2))(h))
    model.export(export_dir, verbose=False)


def tf_keras_cnn(export_dir):
    """Conv2D(5)+BN+ReLU, MaxPool, Conv2D(7, no bias)+BN, GAP, Dense(3) in
    tf_keras, its BN statistics and parameters away from their initial values."""
    import tf_keras  # TF 2.21's Keras 2, imported only here
    tf_keras.utils.set_random_seed(41)
    x = tf_keras.Input((9, 11, 3), name="x")
    h = tf_keras.layers.Conv2D(5, 3, padding="same")(x)
    h = tf_keras.layers.BatchNormalization()(h)
    h = tf_keras.layers.ReLU()(h)
    h = tf_keras.layers.MaxPooling2D()(h)
    h = tf_keras.layers.Conv2D(7, 3, use_bias=False)(h)
    h = tf_keras.layers.BatchNormalization(epsilon=0.01)(h)
    h = tf_keras.layers.GlobalAveragePooling2D()(h)
    model = tf_keras.Model(x, tf_keras.layers.Dense(3)(h))
    rng = np.random.RandomState(41)
    for layer in model.layers:
        if isinstance(layer, tf_keras.layers.BatchNormalization):
            c = layer.gamma.shape[0]
            layer.gamma.assign(rng.uniform(0.5, 1.5, c).astype(np.float32))
            layer.beta.assign(rng.uniform(-0.5, 0.5, c).astype(np.float32))
            layer.moving_mean.assign(rng.uniform(-0.3, 0.3, c).astype(np.float32))
            layer.moving_variance.assign(rng.uniform(0.3, 2.0, c).astype(np.float32))
    model.export(export_dir)


def run_eager(driver, export_dir, signature, inputs, work, name):
    feeds = os.path.join(work, name + ".feeds")
    out = os.path.join(work, name + ".out")
    write_bundle(feeds, inputs)
    proc = subprocess.run([driver, export_dir, signature, feeds, out], capture_output=True,
                          text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"driver failed ({proc.returncode}): {proc.stderr.strip()}")
    return read_bundle(out)


def check_model(tally, driver, export_dir, work, name, inputs):
    loaded = tf.saved_model.load(export_dir)
    fn = loaded.signatures["serving_default"]
    _, kwargs = fn.structured_input_signature
    if isinstance(inputs, np.ndarray):
        inputs = {key: inputs for key in kwargs}
    want = {k: v.numpy() for k, v in fn(**{k: tf.constant(v) for k, v in inputs.items()}).items()}
    got = run_eager(driver, export_dir, "serving_default", inputs, work, name)
    if ".error" in got:
        tally.check(name, "eager: " + got[".error"])
        return None
    fused_nodes = int(got.pop(".fused_nodes"))
    tally.check(f"{name} output keys", None if sorted(got) == sorted(want)
                else f"eager {sorted(got)}, TF {sorted(want)}")
    for key in sorted(want):
        if key in got:
            tally.check(f"{name} {key}", mismatch(key, got[key], want[key], TOL))
    return fused_nodes


def main():
    driver = driver_arg("driver")
    work = driver_arg("work")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    tally = Tally()
    batch = np.random.RandomState(7).randn(6, 3).astype(np.float32)

    mlp_dir = os.path.join(work, "mlp")
    tf.saved_model.save(Mlp(), mlp_dir)
    check_model(tally, driver, mlp_dir, work, "tf.Module MLP", batch)

    tunable_dir = os.path.join(work, "tunable")
    tf.saved_model.save(Tunable(), tunable_dir)
    for sign in (1, -1):  # each branch of the tf.cond
        check_gradients(tally, driver, tunable_dir, work, sign * np.abs(batch))

    keras_dir = os.path.join(work, "keras")
    keras_sequential(keras_dir)
    check_model(tally, driver, keras_dir, work, "Keras 3 Sequential export", batch)

    attention_dir = os.path.join(work, "attention")
    keras_attention(attention_dir)
    check_model(tally, driver, attention_dir, work, "Keras 3 EinsumDense + MultiHeadAttention",
                np.random.RandomState(8).randn(6, 5, 4).astype(np.float32))

    loop_dir = os.path.join(work, "loop")
    tf.saved_model.save(Loop(), loop_dir)
    for sign, n in ((1, 4), (-1, 0), (-1, 3)):
        check_model(tally, driver, loop_dir, work, f"tf.cond + tf.while_loop (sign {sign}, n {n})",
                    {"x": sign * np.abs(batch), "n": np.int32(n)})

    switch_dir = os.path.join(work, "switch")
    tf.saved_model.save(Switch(), switch_dir)
    graph = tf.saved_model.load(switch_dir).signatures["serving_default"].graph
    ops = {node.op for f in graph.as_graph_def().library.function for node in f.node_def}
    tally.check("tf.switch_case saves Case and StatelessCase",
                None if {"Case", "StatelessCase"} <= ops else f"the library holds {sorted(ops)}")
    for i in (0, 1, 2, 3, -1):
        check_model(tally, driver, switch_dir, work, f"tf.switch_case (index {i})",
                    {"x": batch, "i": np.int32(i)})

    counter_dir = os.path.join(work, "counter")
    tf.saved_model.save(Counter(), counter_dir)
    check_model(tally, driver, counter_dir, work, "variable assigned in the function",
                {"delta": np.float32(0.25)})

    methods_dir = os.path.join(work, "methods")
    saved_methods(methods_dir)
    check_function(tally, driver, methods_dir, work, "Function __call__ by name", "__call__",
                   {"x": batch}, positional=False)
    check_function(tally, driver, methods_dir, work, "Function __call__ positional", "__call__",
                   {"x": batch}, positional=True)
    for shape in ((2,), (2, 2)):
        a = np.arange(np.prod(shape), dtype=np.float32).reshape(shape) - 1.5
        check_function(tally, driver, methods_dir, work,
                       f"Function scale {'x'.join(map(str, shape))}",
                       "scale", {"a": a, "b": np.int32(2)}, positional=shape == (2,))
    # A shape no trace has: TF refuses it, eager too, naming the traces.
    try:
        tf.saved_model.load(methods_dir).scale(tf.zeros([3]), tf.constant(2))
        tally.check("Function scale 3", "TF ran it; the test expects a refusal")
    except (ValueError, TypeError):
        got = run_eager(driver, methods_dir, "function:scale",
                        {"a": np.zeros(3, np.float32), "b": np.int32(2)}, work, "scale3")
        error = got.get(".error", "")
        tally.check("Function scale 3",
                    None if "function 'scale' has no trace" in error and "a: float32 [2,2]" in error
                    else f"eager gave {got!r}")

    array_dir = os.path.join(work, "tensor_array")
    tf.saved_model.save(ArrayLoop(), array_dir)
    ops = library_ops(array_dir)
    want = {"TensorListReserve", "TensorListFromTensor", "TensorListGetItem",
            "TensorListSetItem", "TensorListStack", "TensorListGather", "TensorListLength",
            "TensorListSplit", "TensorListConcatV2"}
    tally.check("tf.TensorArray saves TensorList ops",
                None if want <= ops else f"missing {sorted(want - ops)}; has {sorted(ops)}")
    # n > rows: the loop wraps around the unstacked rows; the written array grows.
    for n, num_rows in ((1, 1), (4, 6), (9, 5)):
        check_model(tally, driver, array_dir, work, f"tf.TensorArray loop (n {n}, {num_rows} rows)",
                    {"x": batch[:num_rows], "n": np.int32(n)})

    rnn_export_dir = os.path.join(work, "rnn_export")
    rnn_saved_dir = os.path.join(work, "rnn_saved_model")
    keras_rnn(rnn_export_dir, rnn_saved_dir)
    sequences = np.random.RandomState(9).randn(4, 7, 3).astype(np.float32)
    for name, export_dir in (("model.export()", rnn_export_dir),
                             ("tf.saved_model.save", rnn_saved_dir)):
        ops = library_ops(export_dir)
        tally.check(f"Keras 3 RNNs ({name}) loop over TensorLists",
                    None if {"While", "TensorListSetItem", "ReverseV2"} <= ops
                    else f"the library holds {sorted(ops)}")
        check_model(tally, driver, export_dir, work, f"Keras 3 LSTM, GRU, SimpleRNN ({name})",
                    sequences)
        check_model(tally, driver, export_dir, work, f"Keras 3 RNNs, one time step ({name})",
                    sequences[:2, :1])

    cnn_dir = os.path.join(work, "tf_keras_cnn")
    tf_keras_cnn(cnn_dir)
    graph = tf.saved_model.load(cnn_dir).signatures["serving_default"].graph
    ops = [node.op for f in graph.as_graph_def().library.function for node in f.node_def]
    tally.check("tf_keras saves two FusedBatchNormV3",
                None if ops.count("FusedBatchNormV3") == 2 else f"the library holds {sorted(ops)}")
    images = np.random.RandomState(8).randn(4, 9, 11, 3).astype(np.float32)
    fused = check_model(tally, driver, cnn_dir, work, "tf_keras CNN with BatchNormalization",
                        images)
    # Conv2D + BiasAdd + FusedBatchNormV3 + Relu, Conv2D + FusedBatchNormV3,
    # MatMul + BiasAdd.
    tally.check("tf_keras CNN: eager folds both batch norms",
                None if fused == 8 else f"{fused} nodes ran fused, not 8")
    return tally.finish()


if __name__ == "__main__":
    raise SystemExit(main())
