"""Shared helpers of the graph differential tests: TF in TF1 graph mode,
bundles in and out, the driver, and the comparison with stated tolerances."""

import os
import subprocess
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
# What eager's Session runs: reference variables (VariableV2) and TF1
# control flow (Switch/Merge). TF 2.x defaults to resource variables and
# functional If/While, which eager's importer does not model.
tf1.disable_resource_variables()
tf1.disable_control_flow_v2()


def write_bundle(prefix, tensors):
    """Writes {key: numpy array} as a TensorBundle with TF's own SaveV2."""
    keys = sorted(tensors)
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=keys, shape_and_slices=[""] * len(keys),
                      tensors=[tf.constant(tensors[k]) for k in keys])


def read_bundle(prefix):
    """{key: numpy value} of every tensor in a bundle, read by TF."""
    reader = tf.train.load_checkpoint(prefix)
    out = {}
    for key in reader.get_variable_to_shape_map():
        value = reader.get_tensor(key)
        out[key] = value.decode() if isinstance(value, bytes) else value
    return out


def run_driver(driver, meta, ckpt, feeds, plan_lines, out):
    """Runs graph_run_driver; returns {line name: {tensor: value} or error}."""
    plan = out + ".plan"
    with open(plan, "w") as f:
        f.write("\n".join(plan_lines) + "\n")
    proc = subprocess.run([driver, meta, ckpt, feeds, plan, out], capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"graph_run_driver failed ({proc.returncode}): {proc.stderr.strip()}")
    results = {}
    for key, value in read_bundle(out).items():
        line, _, tensor = key.partition("/")
        results.setdefault(line, {})[tensor] = value
    return results


def mismatch(name, got, want, tol):
    """None when `got` equals `want` within tol (0: bit for bit), else why."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"{name}: eager {got.dtype}{list(got.shape)}, TF {want.dtype}{list(want.shape)}"
    if tol == 0 or want.dtype.kind not in "fc":
        if np.array_equal(got, want, equal_nan=want.dtype.kind in "fc"):
            return None
        bad = np.argwhere(got != want)[0]
        return (f"{name}: not bit-equal, first at {tuple(bad)}: eager {got[tuple(bad)]!r}, "
                f"TF {want[tuple(bad)]!r}")
    # Relative to the tensor's scale: |eager - TF| <= tol * max(1, max|TF|).
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    diff = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    if diff <= tol * scale:
        return None
    return f"{name}: max |eager - TF| = {diff:.3g} > {tol:g} * {scale:.3g}"


class Tally:
    def __init__(self):
        self.passed = 0
        self.failed = []

    def check(self, what, problem):
        if problem is None:
            self.passed += 1
        else:
            self.failed.append(f"{what}: {problem}")
            print(f"FAIL {what}: {problem}", flush=True)

    def finish(self):
        print(f"{self.passed} passed, {len(self.failed)} failed", flush=True)
        return 1 if self.failed else 0


def driver_arg(name):
    for arg in sys.argv[1:]:
        if arg.startswith(name + "="):
            return arg.split("=", 1)[1]
    raise SystemExit(f"missing argument {name}=...")
