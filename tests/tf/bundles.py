"""Issue 25, item 1: TensorBundles both ways, every dtype TF stores, judged by
TensorFlow itself.

  eager writes (tf_bundle_tool write)  -> tf.train.load_checkpoint and
                                          tf.raw_ops.RestoreV2 give identical bits
  TF writes (SaveV2, tf.train.Checkpoint, a TF1 Saver(sharded=True) over three
  devices, tf.compat.v1 partitioned variables) -> eager reads identical bits
                                          (partitioned variables as the full tensor)

    bundles.py TOOL WORKDIR [--seed N] [--count N]   # 200 random bundles each way
    bundles.py TOOL WORKDIR --large                  # one tensor over 2 GiB each way

The seed is printed; EAGER_TF_SEED=N (or --seed N) repeats a run.
"""
import argparse
import glob
import os
import random
import shutil
import struct
import sys

from common import Cases, expect_equal, run_tool

import numpy as np
import tensorflow as tf

# Every dtype a TF checkpoint stores values of (types.proto), as TF names them.
DTYPES = [tf.float16, tf.float32, tf.float64, tf.bfloat16, tf.complex64, tf.complex128,
          tf.int8, tf.int16, tf.int32, tf.int64, tf.uint8, tf.uint16, tf.uint32, tf.uint64,
          tf.bool, tf.string]

KEY_PIECES = ["v", "dense/kernel", "a.b", "with space", "變數", "ü/ß", "x/.ATTRIBUTES/VALUE",
              "layer-0", "_CHECKPOINTABLE", "Ω.λ", "deep/er/and/deeper", "z"]


def random_shape(rng):
    kind = rng.random()
    if kind < 0.15:
        return []                                   # scalar
    if kind < 0.22:
        return [0]
    if kind < 0.28:
        return [0, 5]
    if kind < 0.38:
        return [rng.randint(1, 2) for _ in range(8)]  # rank 8
    if kind < 0.40:
        return [rng.randint(300_000, 1_300_000)]    # 1-10 MiB: chunked, threaded reads
    return [rng.randint(1, 7) for _ in range(rng.randint(1, 4))]


def random_string(rng):
    kind = rng.random()
    if kind < 0.15:
        return b""
    if kind < 0.3:
        return b"\x00" + rng.randbytes(rng.randint(0, 6)) + b"\x00"
    if kind < 0.45:
        return b"\xff\xfe\xc3(" + bytes([rng.randrange(128, 256)])  # not UTF-8
    if kind < 0.5:
        return rng.randbytes(rng.randint(128, 40_000))  # a length of 2 or 3 varint bytes
    return "ok ü 變".encode() * rng.randint(0, 3)


def random_value(rng, dtype, shape):
    """A numpy array: random bits for numbers (NaN payloads, denormals and all)."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == tf.string:
        return np.array([random_string(rng) for _ in range(n)], dtype=object).reshape(shape)
    if dtype == tf.bool:
        return (np.frombuffer(rng.randbytes(n), np.uint8) & 1).astype(bool).reshape(shape)
    np_dtype = dtype.as_numpy_dtype
    return np.frombuffer(rng.randbytes(n * np.dtype(np_dtype).itemsize),
                         np_dtype).reshape(shape).copy()


def random_bundle(rng, index):
    tensors = {}
    for t in range(rng.randint(1, 6)):
        key = "/".join(rng.choice(KEY_PIECES) for _ in range(rng.randint(1, 3))) + f"_{t}"
        dtype = rng.choice(DTYPES)
        shape = random_shape(rng)
        if dtype == tf.string and np.prod(shape) > 64:
            shape = [rng.randint(1, 64)]
        tensors[key] = (dtype, random_value(rng, dtype, shape))
    return tensors


def same_bits(what, got, dtype, want):
    """got: what the reader gave (numpy); want: the numpy array written."""
    if isinstance(got, bytes):  # a scalar string; np.asarray would make it an
        got = np.array(got, dtype=object)  # 'S' array, which drops trailing NULs
    got = np.asarray(got)
    expect_equal(f"{what} shape", list(got.shape), list(want.shape))
    if dtype == tf.string:
        expect_equal(f"{what} strings", [bytes(x) for x in got.reshape(-1)],
                     [bytes(x) for x in want.reshape(-1)])
        return
    expect_equal(f"{what} dtype", got.dtype, np.dtype(dtype.as_numpy_dtype))
    if got.tobytes() != want.tobytes():
        flat_got, flat_want = got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8)
        first = int(np.argmax(flat_got != flat_want))
        raise AssertionError(f"{what}: bytes differ first at byte {first} of {want.nbytes}")


# ---- the manifest tf_bundle_tool reads and writes (see bundle_tool.cc) ----

def hexed(text):
    data = text.encode() if isinstance(text, str) else text
    return data.hex() if data else "-"


def element_bytes(dtype, value):
    if dtype == tf.string:
        return b"".join(struct.pack("<Q", len(s)) + bytes(s) for s in value.reshape(-1))
    if dtype == tf.bool:
        return value.astype(np.uint8).tobytes()
    return value.tobytes()


def write_manifest(bundles, manifest_path, blob_path):
    """bundles: [(prefix, num_shards, {key: (dtype, value)})]."""
    lines, blob = [], bytearray()
    for prefix, num_shards, tensors in bundles:
        lines.append(f"bundle {hexed(prefix)} {num_shards}")
        for key, (dtype, value) in tensors.items():
            data = element_bytes(dtype, value)
            dims = " ".join(str(d) for d in value.shape)
            lines.append(f"tensor {hexed(key)} {dtype.as_datatype_enum} {value.ndim} {dims} "
                         f"{len(blob)} {len(data)}".replace("  ", " "))
            blob += data
    with open(manifest_path, "w") as f:
        f.write("\n".join(lines) + "\n")
    with open(blob_path, "wb") as f:
        f.write(blob)


def unhexed(word):
    return b"" if word == "-" else bytes.fromhex(word)


def read_manifest(manifest_path, blob_path):
    """{prefix: {key: (dtype, numpy value) or ("error", message)}}, num_shards too."""
    with open(blob_path, "rb") as f:
        blob = f.read()
    bundles, shards, current = {}, {}, None
    for line in open(manifest_path).read().splitlines():
        words = line.split(" ")
        if words[0] == "bundle":
            current = bundles.setdefault(unhexed(words[1]).decode(), {})
            shards[unhexed(words[1]).decode()] = int(words[2])
        elif words[0] == "error":
            current[unhexed(words[1]).decode()] = ("error", unhexed(words[2]).decode())
        elif words[0] == "tensor":
            key = unhexed(words[1]).decode()
            dtype = tf.as_dtype(int(words[2]))
            rank = int(words[3])
            shape = [int(w) for w in words[4:4 + rank]]
            offset, size = int(words[4 + rank]), int(words[5 + rank])
            data = blob[offset:offset + size]
            if dtype == tf.string:
                values, at = [], 0
                while at < len(data):
                    (length,) = struct.unpack_from("<Q", data, at)
                    values.append(data[at + 8:at + 8 + length])
                    at += 8 + length
                value = np.array(values, dtype=object).reshape(shape)
            elif dtype == tf.bool:
                value = np.frombuffer(data, np.uint8).astype(bool).reshape(shape)
            else:
                value = np.frombuffer(data, dtype.as_numpy_dtype).reshape(shape)
            current[key] = (dtype, value)
    return bundles, shards


def eager_read(tool, workdir, prefixes):
    manifest, blob = os.path.join(workdir, "read.manifest"), os.path.join(workdir, "read.blob")
    run_tool(tool, "read", manifest, blob, *prefixes)
    return read_manifest(manifest, blob)


def eager_saw(what, got, dtype, want):
    """got: eager's (dtype, value) or ("error", message) for one key."""
    if got[0] == "error":
        raise AssertionError(f"{what}: eager could not read it: {got[1]}")
    expect_equal(f"{what} dtype", got[0], dtype)
    same_bits(what, got[1], dtype, want)


# ---- eager writes, TF reads ----

def check_tf_reads(prefix, tensors):
    reader = tf.train.load_checkpoint(prefix)
    expect_equal("keys", sorted(reader.get_variable_to_dtype_map()), sorted(tensors))
    shapes = reader.get_variable_to_shape_map()
    for key, (dtype, value) in tensors.items():
        expect_equal(f"{key!r} dtype", reader.get_variable_to_dtype_map()[key], dtype)
        expect_equal(f"{key!r} shape", list(shapes[key]), list(value.shape))
        same_bits(f"load_checkpoint {key!r}", reader.get_tensor(key), dtype, value)
    keys = list(tensors)
    if not keys:
        return
    restored = tf.raw_ops.RestoreV2(prefix=prefix, tensor_names=keys,
                                    shape_and_slices=[""] * len(keys),
                                    dtypes=[tensors[k][0] for k in keys])
    for key, tensor in zip(keys, restored):
        dtype, value = tensors[key]
        same_bits(f"RestoreV2 {key!r}", tensor.numpy(), dtype, value)


def eager_writes(cases, tool, workdir, rng, count):
    bundles = []
    for i in range(count):
        num_shards = rng.choice([1, 1, 1, 2, 3])
        bundles.append((os.path.join(workdir, f"eager_{i:03d}", "model.ckpt"), num_shards,
                        random_bundle(rng, i) if i else {}))  # the first one empty
    ok = cases.run("eager writes the random bundles", lambda: write_manifest(
        bundles, os.path.join(workdir, "write.manifest"), os.path.join(workdir, "write.blob")))
    ok = ok and cases.run("tf_bundle_tool write", run_tool, tool, "write",
                          os.path.join(workdir, "write.manifest"),
                          os.path.join(workdir, "write.blob"))
    if not ok:
        return
    for prefix, num_shards, tensors in bundles:
        cases.run(f"TF reads {prefix} ({num_shards} shards, {len(tensors)} tensors)",
                  check_tf_reads, prefix, tensors)


# ---- TF writes, eager reads ----

def tf_writes_save_v2(cases, tool, workdir, rng, count):
    bundles = []
    for i in range(count):
        prefix = os.path.join(workdir, f"tf_{i:03d}", "model.ckpt")
        tensors = random_bundle(rng, i)
        keys = list(tensors)
        tf.raw_ops.SaveV2(prefix=prefix, tensor_names=keys, shape_and_slices=[""] * len(keys),
                          tensors=[tf.constant(tensors[k][1], dtype=tensors[k][0])
                                   for k in keys])
        bundles.append((prefix, tensors))
    seen, _ = eager_read(tool, workdir, [p for p, _ in bundles])

    def check(prefix, tensors):
        expect_equal("keys", sorted(seen[prefix]), sorted(tensors))
        for key, (dtype, value) in tensors.items():
            eager_saw(repr(key), seen[prefix][key], dtype, value)

    for prefix, tensors in bundles:
        cases.run(f"eager reads SaveV2's {prefix}", check, prefix, tensors)


def tf_writes_checkpoint(cases, tool, workdir, rng):
    """tf.train.Checkpoint: a variable of every dtype (TF2 resource variables)."""
    root = tf.Module()
    values = {}
    for dtype in DTYPES:
        value = random_value(rng, dtype, [3, 2] if dtype != tf.string else [4])
        name = f"var_{dtype.name}"
        setattr(root, name, tf.Variable(value, dtype=dtype))
        values[f"model/{name}/.ATTRIBUTES/VARIABLE_VALUE"] = (dtype, value)
    checkpoint = tf.train.Checkpoint(model=root)  # (a child named root would be the root)
    path = checkpoint.save(os.path.join(workdir, "tf_checkpoint", "ckpt"))
    seen, _ = eager_read(tool, workdir, [path])

    def check():
        keys = seen[path]
        expect_equal("save_counter", keys["save_counter/.ATTRIBUTES/VARIABLE_VALUE"][1].item(), 1)
        assert "_CHECKPOINTABLE_OBJECT_GRAPH" in keys, sorted(keys)
        for key, (dtype, value) in values.items():
            eager_saw(key, keys[key], dtype, value)
        # Every key eager lists, TF lists, and the other way round.
        expect_equal("keys", sorted(keys),
                     sorted(tf.train.load_checkpoint(path).get_variable_to_dtype_map()))

    cases.run(f"eager reads tf.train.Checkpoint's {path} (every dtype)", check)


def tf1_graph_saves(cases, tool, workdir, rng):
    """A TF1 Saver(sharded=True) over three CPU devices, and partitioned variables."""
    config = tf.compat.v1.ConfigProto(device_count={"CPU": 3})
    graph = tf.Graph()
    expected = {}
    with graph.as_default():
        for device in range(3):
            with tf.device(f"/cpu:{device}"):
                for dtype in (tf.float32, tf.int64, tf.string, tf.bfloat16):
                    value = random_value(rng, dtype, [2, 3] if dtype != tf.string else [3])
                    name = f"cpu{device}/{dtype.name}"
                    tf.compat.v1.Variable(value, dtype=dtype, name=name)
                    expected[name] = (dtype, value)
        # Partitioned: 3 slices along axis 0, and 3 along axis 1.
        rows = tf.compat.v1.get_variable(
            "partitioned/rows", shape=[10, 7], dtype=tf.float32,
            partitioner=tf.compat.v1.fixed_size_partitioner(3),
            initializer=tf.compat.v1.random_normal_initializer(seed=rng.randrange(1 << 30)))
        grid = tf.compat.v1.get_variable(
            "partitioned/grid", shape=[6, 9], dtype=tf.float64,
            partitioner=lambda shape, dtype: [1, 3],  # TF slices one axis only
            initializer=tf.compat.v1.random_uniform_initializer(seed=rng.randrange(1 << 30)))
        sharded = tf.compat.v1.train.Saver(sharded=True)
        plain = tf.compat.v1.train.Saver()
        for name in ("tf1_sharded", "tf1_plain"):  # TF1's Saver wants the directory
            os.makedirs(os.path.join(workdir, name))
        with tf.compat.v1.Session(graph=graph, config=config) as sess:
            sess.run(tf.compat.v1.global_variables_initializer())
            full = {"partitioned/rows": (tf.float32, sess.run(rows.as_tensor())),
                    "partitioned/grid": (tf.float64, sess.run(grid.as_tensor()))}
            sharded_path = sharded.save(sess, os.path.join(workdir, "tf1_sharded", "model.ckpt"))
            plain_path = plain.save(sess, os.path.join(workdir, "tf1_plain", "model.ckpt"))
    expected.update(full)
    seen, shards = eager_read(tool, workdir, [sharded_path, plain_path])

    def check(path, num_shards):
        # One shard per device that holds variables: the three, and the
        # partitioned variables' default device.
        expect_equal("shards", shards[path], num_shards)
        expect_equal("data files", len(glob.glob(f"{path}.data-*-of-*")), num_shards)
        expect_equal("keys", sorted(seen[path]), sorted(expected))
        for key, (dtype, value) in expected.items():
            eager_saw(key, seen[path][key], dtype, value)

    cases.run(f"eager reads TF1 Saver(sharded=True) over 3 devices: {sharded_path}", check,
              sharded_path, 4)
    cases.run(f"eager reads TF1 Saver with partitioned variables: {plain_path}", check,
              plain_path, 1)


# ---- over 2 GiB in one tensor ----

def large_block(rows):
    """bundle_tool.cc's LargeByte(i) for i in [256 * rows[0], 256 * (rows[-1] + 1)),
    one row of 256 a block: byte 0 of i is the column, so each row is
    arange(256) XOR (bytes 1-4 of i XORed), the row's one constant."""
    r = rows.astype(np.uint64)
    constant = (r ^ (r >> 8) ^ (r >> 16) ^ (r >> 24)).astype(np.uint8)
    return np.arange(256, dtype=np.uint8)[None, :] ^ constant[:, None]


def large_rows(size, chunk_rows=1 << 18):
    """(start byte, rows) over whole 256-byte rows, in chunks of 64 MiB."""
    for start in range(0, size // 256, chunk_rows):
        yield start * 256, np.arange(start, min(start + chunk_rows, size // 256))


def large_tail(size):
    i = np.arange(size - size % 256, size, dtype=np.uint64)
    return (i ^ (i >> 8) ^ (i >> 16) ^ (i >> 24) ^ (i >> 32)).astype(np.uint8)


def check_large_bytes(what, values):
    for start, rows in large_rows(values.size):
        block = values[start:start + rows.size * 256].reshape(-1, 256)
        if not np.array_equal(block, large_block(rows)):
            raise AssertionError(f"{what}: bytes differ in [{start}, {start + block.size})")
    if not np.array_equal(values[values.size - values.size % 256:], large_tail(values.size)):
        raise AssertionError(f"{what}: the last {values.size % 256} bytes differ")


def large_bytes(size):
    values = np.empty(size, np.uint8)
    for start, rows in large_rows(size):
        values[start:start + rows.size * 256] = large_block(rows).reshape(-1)
    values[size - size % 256:] = large_tail(size)
    return values


LARGE_BYTES = (2 << 30) + 4099  # over 2 GiB, and not a multiple of any piece size


def large(cases, tool, workdir):
    eager_prefix = os.path.join(workdir, "eager_large", "model.ckpt")

    def tf_reads_eager():
        run_tool(tool, "write-large", eager_prefix, "big", LARGE_BYTES)
        value = tf.train.load_checkpoint(eager_prefix).get_tensor("big")
        expect_equal("shape", value.shape, (LARGE_BYTES,))
        check_large_bytes("load_checkpoint", value)
        del value
        (tensor,) = tf.raw_ops.RestoreV2(prefix=eager_prefix, tensor_names=["big"],
                                         shape_and_slices=[""], dtypes=[tf.uint8])
        check_large_bytes("RestoreV2", tensor.numpy())

    def eager_reads_tf():
        tf_prefix = os.path.join(workdir, "tf_large", "model.ckpt")
        values = large_bytes(LARGE_BYTES)
        tf.raw_ops.SaveV2(prefix=tf_prefix, tensor_names=["big"], shape_and_slices=[""],
                          tensors=[tf.constant(values)])
        del values
        print(run_tool(tool, "check-large", tf_prefix, "big"), end="")

    cases.run("TF reads eager's uint8 tensor of 2 GiB + 4099 bytes", tf_reads_eager)
    shutil.rmtree(os.path.dirname(eager_prefix), ignore_errors=True)
    cases.run("eager reads TF's uint8 tensor of 2 GiB + 4099 bytes", eager_reads_tf)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("tool")
    parser.add_argument("workdir")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("EAGER_TF_SEED", "0")))
    parser.add_argument("--count", type=int, default=200)
    parser.add_argument("--large", action="store_true")
    args = parser.parse_args()
    shutil.rmtree(args.workdir, ignore_errors=True)
    os.makedirs(args.workdir)
    cases = Cases()
    if args.large:
        large(cases, args.tool, args.workdir)
        shutil.rmtree(args.workdir, ignore_errors=True)
        cases.finish()
    seed = args.seed or random.SystemRandom().randrange(1, 1 << 31)
    print(f"seed {seed} (EAGER_TF_SEED={seed} repeats this run)")
    rng = random.Random(seed)
    eager_writes(cases, args.tool, args.workdir, rng, args.count)
    tf_writes_save_v2(cases, args.tool, args.workdir, rng, args.count)
    cases.run("tf.train.Checkpoint saves", tf_writes_checkpoint, cases, args.tool, args.workdir,
              rng)
    cases.run("TF1 Savers save", tf1_graph_saves, cases, args.tool, args.workdir, rng)
    cases.finish()


if __name__ == "__main__":
    main()
