"""TensorFlow 2.21 reads eager's distributed checkpoints (issue 29; labels tf, mpi).

For 2 and 3 ranks, `mpirun -np N distributed_tf_driver DIR` trains a small MLP
with DistributedOptimizer(Adam) and saves it with
CheckpointOptions{.distributed = true}: DIR/ckpt-1 is one bundle in N data
files, one per rank. Then TensorFlow:
- tf.train.load_checkpoint / list_variables read it as one bundle, and every
  tensor (the object graph included) equals the one a single process writes
  of the same objects (DIR/reference, written by rank 0 alone);
- every rank's own values (DIR/values.rankR.txt: key, dtype, shape, bytes)
  equal what TensorFlow reads, to the bit;
- tf.train.Checkpoint(model=..., optimizer=..., extra=...) over plain
  tf.Module / tf.Variable objects restores by the object graph, and the
  variables get the ranks' values.

    python tf_reads_distributed_checkpoint.py DRIVER WORKDIR MPIRUN...
"""
import os
import shutil
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tf"))
import common  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64}


def read_values(path):
    """{key: np.ndarray} from a values.rankR.txt."""
    values = {}
    with open(path) as f:
        for line in f:
            key, dtype, dims, hexbytes = line.split()
            shape = () if dims == "-" else tuple(int(d) for d in dims.rstrip(",").split(","))
            values[key] = np.frombuffer(bytes.fromhex(hexbytes), DTYPES[dtype]).reshape(shape)
    return values


def check_files(work, ranks):
    for r in range(ranks):
        data = os.path.join(work, f"ckpt-1.data-{r:05d}-of-{ranks:05d}")
        if not os.path.getsize(data):
            raise AssertionError(f"{data} is empty: rank {r} wrote nothing")
    common.expect_equal("the state file's latest", tf.train.latest_checkpoint(work),
                        os.path.join(work, "ckpt-1"))


def check_reader(work):
    prefix = os.path.join(work, "ckpt-1")
    reference = os.path.join(work, "reference")
    listed = tf.train.list_variables(prefix)
    common.expect_equal("list_variables", listed, tf.train.list_variables(reference))
    reader = tf.train.load_checkpoint(prefix)
    ref_reader = tf.train.load_checkpoint(reference)
    for key, _ in listed:
        got, want = reader.get_tensor(key), ref_reader.get_tensor(key)
        if isinstance(want, bytes):
            common.expect_equal(key, got, want)
        elif got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
            raise AssertionError(f"{key}: the distributed bundle holds {got!r}, one process "
                                 f"wrote {want!r}")
    return reader, {key for key, _ in listed}


def check_rank_values(work, ranks, reader, keys):
    for r in range(ranks):
        values = read_values(os.path.join(work, f"values.rank{r}.txt"))
        missing = set(values) - keys
        if missing:
            raise AssertionError(f"rank {r}'s keys not in the checkpoint: {sorted(missing)}")
        for key, want in values.items():
            got = reader.get_tensor(key)
            if got.dtype != want.dtype or got.shape != want.shape or got.tobytes() != want.tobytes():
                raise AssertionError(f"rank {r}, {key}: TF reads {got!r}, the rank held {want!r}")
    return read_values(os.path.join(work, "values.rank0.txt"))


def check_restore(work, values):
    def var(key):
        want = values[key + "/.ATTRIBUTES/VARIABLE_VALUE"]
        return tf.Variable(tf.zeros(want.shape, want.dtype))

    def layer(name):
        m = tf.Module()
        m.kernel = var(f"model/{name}/kernel")
        m.bias = var(f"model/{name}/bias")
        return m

    model = tf.Module()
    model.hidden = layer("hidden")
    model.logits = layer("logits")
    optimizer = tf.Module()
    optimizer.iter = var("optimizer/iter")
    extra = var("extra")
    root = tf.train.Checkpoint(model=model, optimizer=optimizer, extra=extra)
    status = root.restore(os.path.join(work, "ckpt-1"))
    status.assert_existing_objects_matched()
    restored = {
        "model/hidden/kernel": model.hidden.kernel, "model/hidden/bias": model.hidden.bias,
        "model/logits/kernel": model.logits.kernel, "model/logits/bias": model.logits.bias,
        "optimizer/iter": optimizer.iter, "extra": extra, "save_counter": root.save_counter,
    }
    for key, variable in restored.items():
        want = values[key + "/.ATTRIBUTES/VARIABLE_VALUE"]
        got = variable.numpy()
        if got.tobytes() != want.tobytes():
            raise AssertionError(f"{key}: restored {got!r}, the ranks held {want!r}")
    common.expect_equal("optimizer iterations", int(optimizer.iter.numpy()), 3)


def main():
    driver, work_root, *mpirun = sys.argv[1:]
    cases = common.Cases()
    for ranks in (2, 3):
        work = os.path.join(work_root, f"np{ranks}")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        if not cases.run(f"np{ranks}_write", common.run_tool, *mpirun, ranks, driver, work):
            continue
        cases.run(f"np{ranks}_files", check_files, work, ranks)
        state = {}

        def reader_case():
            state["reader"], state["keys"] = check_reader(work)

        if cases.run(f"np{ranks}_load_checkpoint_equals_one_process", reader_case):
            values = {}

            def ranks_case():
                values.update(check_rank_values(work, ranks, state["reader"], state["keys"]))

            if cases.run(f"np{ranks}_every_rank_values", ranks_case):
                cases.run(f"np{ranks}_checkpoint_restore", check_restore, work, values)
    cases.finish()


if __name__ == "__main__":
    main()
