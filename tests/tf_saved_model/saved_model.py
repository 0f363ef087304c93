"""TensorFlow 2.21 judges eager's SavedModel exports (issue 28).

usage: saved_model.py SAVED_MODEL_TOOL WORKDIR

The driver exports a graph-mode model with eager::SavedModelBuilder and prints
eager's outputs for a probe batch; here TF's TF1 loader, tf.saved_model.load's
signatures and saved_model_cli must give the same values (float32 tolerance
1e-6 relative: the same ops in another order of summation) and describe the
signatures with their names, dtypes and shapes.
"""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tf"))
from common import Cases  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

TOL = dict(rtol=1e-6, atol=1e-6)


def parse_printed(text):
    rows = {}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] in ("x", "logits", "half"):
            rows[parts[0]] = np.array([float(v) for v in parts[1:]], dtype=np.float32)
    return rows


def main():
    tool, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    export = os.path.join(work, "1")
    printed = subprocess.run([tool, "export", export], check=True, capture_output=True,
                             text=True).stdout
    rows = parse_printed(printed)
    x = rows["x"].reshape(4, 3)
    eager_logits = rows["logits"].reshape(4, 2)
    eager_half = rows["half"].reshape(4, 2)
    cases = Cases()

    def independent_reference():
        # TF reads the variables from variables/; numpy computes the model.
        prefix = os.path.join(export, "variables", "variables")
        w = tf.train.load_variable(prefix, "dense/kernel")
        b = tf.train.load_variable(prefix, "dense/bias")
        np.testing.assert_allclose(eager_logits, x @ w + b, **TOL)

    def tf1_loader():
        with tf.compat.v1.Graph().as_default() as g, tf.compat.v1.Session(graph=g) as sess:
            meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export)
            assert set(meta.signature_def) == {"serving_default", "scaled"}, meta.signature_def.keys()
            sig = meta.signature_def["scaled"]
            out = sess.run({k: sig.outputs[k].name for k in ("logits", "half")},
                           {sig.inputs["x"].name: x})
            np.testing.assert_allclose(out["logits"], eager_logits, **TOL)
            np.testing.assert_allclose(out["half"], eager_half, **TOL)

    def tf2_load_signatures():
        loaded = tf.saved_model.load(export)
        assert set(loaded.signatures.keys()) == {"serving_default", "scaled"}, loaded.signatures
        out = loaded.signatures["serving_default"](x=tf.constant(x))
        assert set(out) == {"logits"}, out.keys()
        np.testing.assert_allclose(out["logits"].numpy(), eager_logits, **TOL)
        out = loaded.signatures["scaled"](x=tf.constant(x))
        np.testing.assert_allclose(out["half"].numpy(), eager_half, **TOL)

    def saved_model_cli_show():
        cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
        text = subprocess.run([cli, "show", "--dir", export, "--all"], check=True,
                              capture_output=True, text=True).stdout
        for want in ("tag-set: 'serve'", "signature_def['serving_default']",
                     "signature_def['scaled']", "inputs['x'] tensor_info:", "dtype: DT_FLOAT",
                     "shape: (-1, 3)", "name: x:0", "outputs['logits'] tensor_info:",
                     "shape: (-1, 2)", "Method name is: tensorflow/serving/predict"):
            assert want in text, f"{want!r} not in saved_model_cli's output:\n{text}"

    cases.run("values: eager = numpy on TF-read variables", independent_reference)
    cases.run("TF1 loader runs eager's SavedModel", tf1_loader)
    cases.run("tf.saved_model.load signatures", tf2_load_signatures)
    cases.run("saved_model_cli show --all", saved_model_cli_show)
    cases.finish()


if __name__ == "__main__":
    main()
