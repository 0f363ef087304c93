"""Issue 40: the main job's `--save_keras FILE` is a model Keras 3 loads and
that reaches, on Fashion-MNIST's test set, the accuracy the run printed for
its raw weights.

    main_job_keras.py MODEL.keras OUTPUT DATA_DIR

OUTPUT is what `fashion_mnist --save_keras MODEL.keras` printed; its line
`test accuracy: R% (raw weights), ...` is compared at the precision printed.
DATA_DIR holds the Debian package's t10k-*-ubyte.gz files.
"""
import gzip
import re
import sys

import numpy as np

from common import Cases, expect_equal

import keras


def idx(path, header_bytes):
    with gzip.open(path, "rb") as f:
        return np.frombuffer(f.read()[header_bytes:], dtype=np.uint8)


def main():
    model_path, output, data_dir = sys.argv[1:4]
    printed = open(output, errors="replace").read()
    cases = Cases()
    match = re.search(r"test accuracy: ([0-9.]+)% \(raw weights\)", printed)
    cases.run("the main job printed its test accuracy", expect_equal, "found", bool(match), True)
    if not match:
        cases.finish()
    images = idx(f"{data_dir}/t10k-images-idx3-ubyte.gz", 16).reshape(-1, 784)
    labels = idx(f"{data_dir}/t10k-labels-idx1-ubyte.gz", 8)
    # As the main job scales them (examples/fashion_mnist/dataset.cc).
    images = images.astype(np.float32) / np.float32(255)
    state = {}

    def load():
        state["model"] = keras.models.load_model(model_path)
        expect_equal("input shape", tuple(state["model"].input_shape), (None, 784))
        expect_equal("output shape", tuple(state["model"].output_shape), (None, 10))

    if not cases.run("keras.models.load_model reads the main job's .keras", load):
        cases.finish()

    def accuracy():
        logits = state["model"].predict(images, batch_size=1000, verbose=0)
        got = 100.0 * float(np.mean(np.argmax(logits, axis=1) == labels))
        want = float(match.group(1))
        if abs(got - want) > 0.006:  # printed with 2 decimals
            raise AssertionError(f"Keras gets {got:.4f}%, the main job printed {want}%")

    cases.run("Keras's predictions reach the printed raw-weights accuracy", accuracy)
    cases.finish()


if __name__ == "__main__":
    main()
