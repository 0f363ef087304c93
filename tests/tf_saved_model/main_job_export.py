"""TensorFlow 2.21 serves the main job's exported model (issue 28).

usage: main_job_export.py FASHION_MNIST MAIN_JOB_PREDICT DATA_DIR WORKDIR

The main job trains briefly (1 epoch, batch 2000: 30 steps) with
--export_dir and --checkpoint_dir. main_job_predict restores the checkpoint
(an independent copy of the weights) and writes eager's logits for the whole
test set, raw and EMA. Then TF's loaders run the export:

- tf.saved_model.load(dir).signatures["serving_default"] (EMA weights) on the
  first 100 test images, and "raw"; then both on all 10,000: the logits equal
  eager's within float32 tolerance (rtol 1e-4, atol 1e-4: TF's and eager's
  GEMMs sum 784 products in different orders), the probabilities are their
  softmax, and every predicted class is eager's, so TF's accuracy is the one
  the main job printed;
- the TF1 loader (tf.compat.v1.saved_model.loader.load, tag serve) runs both
  signatures in a Session;
- saved_model_cli show --all lists the signatures with names, dtypes, shapes.
"""
import gzip
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tf"))
from common import Cases, run_tool  # noqa: E402

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

TOL = dict(rtol=1e-4, atol=1e-4)


def read_test_set(data_dir):
    # IDX, read here with numpy: 16-byte image header, 8-byte label header.
    with gzip.open(os.path.join(data_dir, "t10k-images-idx3-ubyte.gz")) as f:
        images = np.frombuffer(f.read()[16:], dtype=np.uint8).reshape(-1, 784)
    with gzip.open(os.path.join(data_dir, "t10k-labels-idx1-ubyte.gz")) as f:
        labels = np.frombuffer(f.read()[8:], dtype=np.uint8)
    return (images / np.float32(255)).astype(np.float32), labels


def softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    main_job, predict, data_dir, work = sys.argv[1:5]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = run_tool(main_job, "--epochs", "1", "--batch_size", "2000", "--seed", "7",
                   "--data_dir", data_dir, "--checkpoint_dir", os.path.join(work, "ckpt"),
                   "--export_dir", os.path.join(work, "serving"))
    print(out.strip().splitlines()[-1])
    export = re.search(r"exported SavedModel (\S+); inspect it with: "
                       r"saved_model_cli show --dir (\S+) --all", out)
    assert export and export.group(1) == export.group(2) == os.path.join(work, "serving", "1"), out
    export = export.group(1)
    accuracy = re.search(r"test accuracy: ([\d.]+)% \(raw weights\), ([\d.]+)% \(EMA weights\)", out)
    printed = {"raw": float(accuracy.group(1)), "serving_default": float(accuracy.group(2))}
    run_tool(predict, os.path.join(work, "ckpt"), data_dir, os.path.join(work, "eager"))
    eager = {"raw": np.fromfile(os.path.join(work, "eager.raw"), np.float32).reshape(-1, 10),
             "serving_default": np.fromfile(os.path.join(work, "eager.ema"),
                                            np.float32).reshape(-1, 10)}
    images, labels = read_test_set(data_dir)
    assert images.shape == (10000, 784) and eager["raw"].shape == (10000, 10)
    # The two weight sets differ, so a mixed-up signature cannot pass.
    assert np.abs(eager["raw"] - eager["serving_default"]).max() > 1e-2
    cases = Cases()
    loaded = tf.saved_model.load(export)

    def tf2_first_100():
        assert set(loaded.signatures.keys()) == {"serving_default", "raw"}, loaded.signatures
        x = tf.constant(images[:100])
        for key in ("serving_default", "raw"):
            got = loaded.signatures[key](images=x)
            assert set(got) == {"logits", "probabilities"}, got.keys()
            np.testing.assert_allclose(got["logits"].numpy(), eager[key][:100], **TOL)
            np.testing.assert_allclose(got["probabilities"].numpy(), softmax(eager[key][:100]),
                                       rtol=1e-4, atol=1e-6)

    def tf2_whole_test_set():
        for key in ("serving_default", "raw"):
            logits = np.concatenate([
                loaded.signatures[key](images=tf.constant(images[i:i + 2500]))["logits"].numpy()
                for i in range(0, 10000, 2500)])
            np.testing.assert_allclose(logits, eager[key], **TOL)
            differ = np.flatnonzero(logits.argmax(1) != eager[key].argmax(1))
            assert differ.size == 0, f"{key}: TF predicts other classes for images {differ[:10]}"
            acc = 100 * np.mean(logits.argmax(1) == labels)
            assert abs(acc - printed[key]) < 0.006, (key, acc, printed[key])
            print(f"  {key}: 10000 predictions equal, accuracy {acc:.2f}%, max |logit diff| "
                  f"{np.abs(logits - eager[key]).max():.2e}")

    def tf1_loader():
        with tf.compat.v1.Graph().as_default() as g, tf.compat.v1.Session(graph=g) as sess:
            meta = tf.compat.v1.saved_model.loader.load(sess, ["serve"], export)
            for key in ("serving_default", "raw"):
                sig = meta.signature_def[key]
                got = sess.run({k: sig.outputs[k].name for k in ("logits", "probabilities")},
                               {sig.inputs["images"].name: images[:100]})
                np.testing.assert_allclose(got["logits"], eager[key][:100], **TOL)
                np.testing.assert_allclose(got["probabilities"], softmax(eager[key][:100]),
                                           rtol=1e-4, atol=1e-6)

    def saved_model_cli_show():
        cli = os.path.join(os.path.dirname(sys.executable), "saved_model_cli")
        text = subprocess.run([cli, "show", "--dir", export, "--all"], check=True,
                              capture_output=True, text=True).stdout
        for key in ("serving_default", "raw"):
            block = text.split(f"signature_def['{key}']:", 1)[1].split("signature_def[", 1)[0]
            for want in ("inputs['images'] tensor_info:", "dtype: DT_FLOAT", "shape: (-1, 784)",
                         "outputs['logits'] tensor_info:", "outputs['probabilities'] tensor_info:",
                         "shape: (-1, 10)", "Method name is: tensorflow/serving/predict"):
                assert want in block, f"{want!r} not in {key}'s block:\n{block}"
        assert "tag-set: 'serve'" in text, text

    cases.run("tf.saved_model.load signatures on 100 test images", tf2_first_100)
    cases.run("TF's predictions = eager's on all 10,000 test images", tf2_whole_test_set)
    cases.run("TF1 loader (tag serve) runs both signatures", tf1_loader)
    cases.run("saved_model_cli show --all", saved_model_cli_show)
    cases.finish()


if __name__ == "__main__":
    main()
