#!/usr/bin/env python3
"""Every real TF bundle and state file under realdata, read by eager-ckpt, must
say what the independent decoder (../shared/tools/tfckpt.py) says: the same
keys, dtypes, shapes, sizes and slices, the same values bit for bit wherever
the data file is present, and, for every `checkpoint` state file, the same
latest checkpoint. Cases are found in the folder, so a new case is checked too.

usage: realdata_tfckpt_test.py EAGER_CKPT TFCKPT_PY REALDATA_DIR
"""
import glob
import importlib.util
import json
import math
import os
import struct
import subprocess
import sys

eager_ckpt, tfckpt_py, realdata = sys.argv[1:4]
if not os.path.isdir(realdata):
    print("skipped: no realdata folder at %s (configure with -DEAGER_REALDATA_DIR=...)" % realdata)
    sys.exit(77)  # ctest's SKIP_RETURN_CODE for this test
spec = importlib.util.spec_from_file_location("tfckpt", tfckpt_py)
tfckpt = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tfckpt)

# eager's dtype names against TF's enum names.
TF_NAME = {"float32": "DT_FLOAT", "float64": "DT_DOUBLE", "float16": "DT_HALF"}
passed = failed = 0


def check(ok, what):
    global passed, failed
    if ok:
        passed += 1
    else:
        failed += 1
        print("FAIL: " + what)


def eager(*args):
    run = subprocess.run([eager_ckpt, *args], capture_output=True)
    return run.returncode, run.stdout, run.stderr.decode("utf-8", "replace")


def flat(v):
    if isinstance(v, list):
        return [x for item in v for x in flat(item)]
    return [v]


def as_float32(x):
    return struct.unpack("<f", struct.pack("<f", x))[0]


def same_values(a, b, dtype):
    """Equal bits in the tensor's own precision (eager prints the shortest
    text that reads back as the float32; tfckpt the float32 widened to a
    double). NaN equals NaN; -0.0 differs from 0.0. Complex numbers are
    [real, imaginary] pairs on both sides."""
    a, b = flat(a), flat(b)
    if len(a) != len(b):
        return False
    narrow = dtype in ("DT_FLOAT", "DT_HALF", "DT_BFLOAT16", "DT_COMPLEX64")
    for x, y in zip(a, b):
        if isinstance(x, float) or isinstance(y, float):
            fx, fy = float(x), float(y)
            if narrow:
                fx, fy = as_float32(fx), as_float32(fy)
            if math.isnan(fx) or math.isnan(fy):
                if not (math.isnan(fx) and math.isnan(fy)):
                    return False
            elif fx != fy or math.copysign(1, fx) != math.copysign(1, fy):
                return False
        elif x != y:
            return False
    return True


bundles = 0
tensors = 0
for index in sorted(glob.glob(os.path.join(realdata, "**", "*.index"), recursive=True)):
    prefix = index[: -len(".index")]
    ck = tfckpt.open_checkpoint(prefix)
    code, out, err = eager("list", "--json", prefix)
    check(code == 0, "eager-ckpt list %s: exit %d: %s" % (prefix, code, err.strip()))
    if code != 0:
        continue
    bundles += 1
    ours = {t["key"]: t for t in json.loads(out)["tensors"]}
    theirs = ck.entries
    check(sorted(ours) == sorted(ck.display_name(k) for k in theirs),
          "%s: keys differ: eager %d, tfckpt %d" % (prefix, len(ours), len(theirs)))
    present = {}
    for name, e in theirs.items():
        key = ck.display_name(name)
        if key not in ours:
            continue
        t = ours[key]
        where = "%s [%s]" % (prefix, key)
        tf_dtype = tfckpt.dtype_name(e["dtype"])
        ours_dtype = t["dtype"] if t["dtype"].startswith("DT_") else \
            TF_NAME.get(t["dtype"], "DT_" + t["dtype"].upper())  # opaque entries keep TF's name
        check(ours_dtype == tf_dtype,
              "%s: dtype %s, tfckpt %s" % (where, t["dtype"], tf_dtype))
        check(t["shape"] == tfckpt.shape_dims(e["shape"]),
              "%s: shape %s, tfckpt %s" % (where, t["shape"], tfckpt.shape_dims(e["shape"])))
        check(t["bytes"] == e["size"], "%s: %d bytes, tfckpt %d" % (where, t["bytes"], e["size"]))
        check(t["slices"] == len(e["slices"]),
              "%s: %d slices, tfckpt %d" % (where, t["slices"], len(e["slices"])))
        shard = e["shard_id"]
        if shard not in present:
            present[shard] = os.path.exists(
                tfckpt.data_filename(prefix, shard, ck.header["num_shards"]))
        if not present[shard] or e["slices"] or name == tfckpt.OBJECT_GRAPH_KEY:
            continue  # no data here; sliced entries are read whole by their full key
        _, dims, vals = ck.values(name)
        want = tfckpt.jsonable(tfckpt.nested(vals, dims))
        code, out, err = eager("dump", "--json", "--limit", "0", prefix, key)
        check(code == 0, "%s: eager-ckpt dump: exit %d: %s" % (where, code, err.strip()))
        if code != 0:
            continue
        dumped = json.loads(out)
        if dumped.get("opaque"):
            # DT_VARIANT (and other dtypes eager does not compute with) are
            # kept as checked bytes: eager verified every element's checksum.
            check(tf_dtype == "DT_VARIANT" and dumped.get("checksum") == "ok",
                  "%s: opaque %s, checksum %s" % (where, tf_dtype, dumped.get("checksum")))
            continue
        got = dumped["values"]
        check(same_values(got, want, tf_dtype), "%s: values differ from tfckpt's" % where)
        tensors += 1

states = 0
for state in sorted(glob.glob(os.path.join(realdata, "**", "checkpoint"), recursive=True)):
    folder = os.path.dirname(state)
    tf = subprocess.run([sys.executable, tfckpt_py, "state", "--json", folder], capture_output=True)
    if not tf.stdout.strip():
        continue  # not a state file tfckpt can parse (it says why); eager is checked elsewhere
    want = json.loads(tf.stdout)["latest_checkpoint"]
    code, out, err = eager("state", "--json", folder)
    got = None
    if code == 0 and out.strip():
        # tf.train.latest_checkpoint: the state's model_checkpoint_path when
        # its .index exists (a missing data shard does not matter to it).
        for c in json.loads(out)["checkpoints"]:
            if c["latest"] and c["status"] != "missing":
                got = c["prefix"]
    check(got == want,
          "%s: eager's latest checkpoint %r, tfckpt's %r (%s)" % (state, got, want, err.strip()))
    states += 1

print("%d bundles, %d tensors compared by value, %d state files" % (bundles, tensors, states))
check(bundles >= 40 and tensors >= 1000 and states >= 10, "fewer cases than realdata holds")
print("%d passed, %d failed" % (passed, failed))
sys.exit(1 if failed else 0)
