"""Shared helpers of the `tf` test label: TensorFlow is the judge of the files
eager writes, and eager of the files TensorFlow writes.

Each script is one ctest test and one Python process (TensorFlow is imported
once); its cases are counted here (`ok NAME` or `FAIL NAME: why`), and it ends
with the plain line `N passed, M failed` (exit 1 unless M == 0 < N).
"""
import os
import subprocess
import sys
import traceback

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")


class Cases:
    """Runs named cases; a case fails on any exception, with its message."""

    def __init__(self):
        self.passed = 0
        self.failed = 0

    def run(self, name, fn, *args, **kwargs):
        try:
            fn(*args, **kwargs)
        except Exception as e:  # every failure is reported, and the run goes on
            self.failed += 1
            print(f"FAIL {name}: {type(e).__name__}: {e}")
            if os.environ.get("EAGER_TF_TRACEBACK"):
                traceback.print_exc()
            return False
        self.passed += 1
        print(f"ok {name}")
        return True

    def finish(self):
        print(f"{self.passed} passed, {self.failed} failed")
        sys.exit(1 if self.failed or not self.passed else 0)


def run_tool(*argv, cwd=None, check=True):
    """Runs an eager program; returns its stdout. Fails with its stderr."""
    proc = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise AssertionError(f"{' '.join(map(str, argv))} exited {proc.returncode}:\n"
                             f"{proc.stdout}{proc.stderr}")
    return proc.stdout


def expect_equal(what, got, want):
    if got != want:
        raise AssertionError(f"{what}: got {got!r}, expected {want!r}")
