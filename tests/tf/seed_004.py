"""Issue 25, item 2: seed 004 exactly as written, run by TensorFlow under
tf.compat.v1 with disable_v2_behavior(), on the files eager's examples write;
and eager's examples on the files TensorFlow's run of the seed writes.

    seed_004.py SEED_FILE EXAMPLES_DIR WORKDIR

The seed's seven programs are taken from SEED_FILE itself (the seed's text is
the test), changed only in two ways: `import tensorflow as tf` becomes
`import tensorflow.compat.v1 as tf`, and './model/' becomes a directory under
WORKDIR. Each runs in a fresh default graph, as each was a script of its own,
with numpy printing as numpy 1.x did (see below).
What each prints is compared with what the seed says it prints, and with what
the same program prints on TensorFlow's own files.
"""
import contextlib
import io
import os
import shutil
import sys

from common import Cases, expect_equal, run_tool

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
# The seed prints lists of numpy scalars as numpy 1.x did ([10.0, 0.10989987]);
# numpy 2 prints [np.float32(10.0), ...] (NEP 51), and names this mode for the
# old form. Not a change to the programs: the values printed are the same.
np.set_printoptions(legacy="1.25")


def seed_programs(seed_text):
    """The seed's code blocks: from `import tensorflow as tf` to the prose
    (a line starting with a non-ASCII character) or the reference list."""
    programs, current = [], None
    for line in seed_text.splitlines():
        if line.strip() == "import tensorflow as tf":
            if current is not None:
                programs.append(current)
            current = [line]
        elif current is not None:
            if line and (not line[0].isascii() or line.strip() == "Reference"):
                programs.append(current)
                current = None
            else:
                current.append(line)
    if current is not None:
        programs.append(current)
    return ["\n".join(p).rstrip() + "\n" for p in programs]


def run_program(source, model_dir):
    """Runs one seed program with ./model/ at model_dir; returns (stdout, error)."""
    source = source.replace("import tensorflow as tf", "import tensorflow.compat.v1 as tf", 1)
    source = source.replace("'./model/", repr(model_dir + "/")[:-1])
    tf.reset_default_graph()
    out = io.StringIO()
    error = None
    with contextlib.redirect_stdout(out):
        try:
            exec(compile(source, "seed_004", "exec"), {"__name__": "seed_004"})
        except tf.errors.OpError as e:
            error = e
    return out.getvalue(), error


def lines(text):
    return text.strip().splitlines()


def main():
    seed_file, examples, work = sys.argv[1:4]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    programs = seed_programs(open(seed_file, encoding="utf-8").read())
    cases = Cases()
    cases.run("the seed has its 7 programs", expect_equal, "programs", len(programs), 7)
    if len(programs) != 7:
        cases.finish()
    save, import_meta, rename, partial, ema_save, ema_rename, ema_to_restore = programs
    tool = lambda name: os.path.join(examples, name)  # noqa: E731

    # ---- TensorFlow writes: the seed's two saving programs ----
    tf_model, tf_ema = os.path.join(work, "tf", "model"), os.path.join(work, "tf", "ema")
    os.makedirs(tf_model)  # TF's Saver.save refuses a missing parent directory
    os.makedirs(tf_ema)

    def tf_saves():
        out, error = run_program(save, tf_model)
        assert error is None, error
        expect_equal("printed", lines(out), ["3.0"])

    def tf_saves_ema():
        out, error = run_program(ema_save, tf_ema)
        assert error is None, error
        expect_equal("printed", lines(out),
                     ["v:0", "v:0", "v/ExponentialMovingAverage:0", "[10.0, 0.10989987]"])

    cases.run("TF runs the seed's save program", tf_saves)
    cases.run("TF runs the seed's EMA save program: [10.0, 0.10989987]", tf_saves_ema)

    # ---- eager writes: its examples' save phases ----
    eager_model, eager_ema = os.path.join(work, "eager", "model"), os.path.join(work, "eager", "ema")

    def eager_saves():
        out = run_tool(tool("save_restore"), eager_model, "save")
        expect_equal("printed", lines(out)[0], "add:0 = 3.0")

    def eager_saves_ema():
        out = run_tool(tool("ema_restore"), eager_ema, "save")
        expect_equal("printed", lines(out)[0], "[10.0, 0.10989987]")

    cases.run("eager's save_restore saves (add:0 = 3.0)", eager_saves)
    cases.run("eager's ema_restore saves ([10.0, 0.10989987])", eager_saves_ema)

    # ---- the seed's restoring programs, on TF's files and on eager's ----
    restoring = [
        ("import_meta_graph + restore + get_tensor_by_name('add:0')", import_meta, "model",
         ["3.0"], None),
        ("the rename map", rename, "model", ["3.0"], None),
        ("partial restore", partial, "model", ["1.0"],
         "Attempting to use uninitialized value v2"),
        ("EMA through the rename map", ema_rename, "ema", ["[0.10989987]"], None),
        ("EMA through variables_to_restore()", ema_to_restore, "ema",
         ["{'v/ExponentialMovingAverage': <tf.Variable 'v:0' shape=() dtype=float32_ref>}",
          "[0.10989987]"], None),
    ]
    for title, program, kind, printed, error_text in restoring:
        results = {}
        for writer, model_dir in (("TF", tf_model if kind == "model" else tf_ema),
                                  ("eager", eager_model if kind == "model" else eager_ema)):
            def check(model_dir=model_dir, writer=writer):
                out, error = run_program(program, model_dir)
                results[writer] = (out, str(error).splitlines()[0] if error else None)
                expect_equal("printed", lines(out), printed)
                if error_text is None:
                    assert error is None, f"{type(error).__name__}: {error}"
                else:
                    assert isinstance(error, tf.errors.FailedPreconditionError), repr(error)
                    assert error_text in str(error), str(error)

            cases.run(f"TF, seed's {title}, on {writer}'s files", check)
        if len(results) == 2:
            cases.run(f"TF, seed's {title}: the same on eager's files as on TF's", expect_equal,
                      "output", results["eager"], results["TF"])

    # ---- eager's examples' restore phases on TF's files ----
    def eager_restores(name, model_dir, wanted):
        out = run_tool(tool(name), model_dir, "restore")
        for text in wanted:
            assert text in out, f"{text!r} not in:\n{out}"

    cases.run("eager's save_restore imports TF's .meta, restores it: add:0 = 3.0", eager_restores,
              "save_restore", tf_model, ["; add:0 = 3.0\n"])
    cases.run("eager's rename_restore on TF's files: 3.0", eager_restores, "rename_restore",
              tf_model, ["renamed-v1 + renamed-v2 = 3.0\n"])
    cases.run("eager's partial_restore on TF's files", eager_restores, "partial_restore",
              tf_model, ["v1 = 1.0\n", "Attempting to use uninitialized value v2"])
    cases.run("eager's ema_restore on TF's files: 0.10989987 both ways", eager_restores,
              "ema_restore", tf_ema,
              ["through the rename map: v = 0.10989987\n",
               "variables_to_restore: v/ExponentialMovingAverage -> v\n",
               "through VariablesToRestore: v = 0.10989987\n"])
    cases.finish()


if __name__ == "__main__":
    main()
