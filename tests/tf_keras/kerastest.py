"""What the Keras tests of the `tf` label share (tests/tf_keras/*_test.py):
each is one Python process (TensorFlow imported once) driving a C++ driver,
counting its checks and printing `FAIL what: why` for each failure and
`N passed, M failed` at the end (the CMake tests' pass expression)."""

import subprocess


class Tally:
    """Counts checks; a check fails when its problem is not None."""

    def __init__(self):
        self.passed, self.failed = 0, 0

    def check(self, what, problem):
        if problem is None:
            self.passed += 1
        else:
            self.failed += 1
            print(f"FAIL {what}: {problem}", flush=True)


def run(args):
    """Runs a driver and prints what it printed; its failure raises
    RuntimeError with its command line and stderr."""
    proc = subprocess.run(args, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: {proc.stderr.strip()}")
    print(proc.stdout.strip(), flush=True)


def start(versions):
    """The driver= and work= arguments of a test run, with the work folder
    made empty, after printing `versions` (which TF and Keras judge)."""
    import os
    import shutil
    import sys
    args = dict(a.split("=", 1) for a in sys.argv[1:])
    shutil.rmtree(args["work"], ignore_errors=True)
    os.makedirs(args["work"])
    print(versions, flush=True)
    return args["driver"], args["work"]
