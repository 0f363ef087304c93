"""Issue 25, item 6: CheckpointManager directories and `checkpoint` state
files, judged by TensorFlow.

  eager's manager writes (absolute and relative directory, max_to_keep and
  keep_checkpoint_every_n_hours retention) ->
      tf.train.latest_checkpoint, tf.train.get_checkpoint_state and
      tf.train.CheckpointManager see the same list, timestamps and values,
      also after the directory is moved; TF's manager goes on from it.
  TF's manager starts a directory -> eager's manager continues it
      (save_counter, retention deleting TF's files), and TF reads the result.

    managers.py MANAGER_TOOL WORKDIR
"""
import os
import shutil
import sys
import time

from common import Cases, expect_equal, run_tool

import tensorflow as tf


def eager_manager(tool, directory, max_to_keep, saves, hours=None, cwd=None):
    """Runs tf_manager_tool; returns {restored, saved: [], latest, kept: []}."""
    out = run_tool(tool, directory, max_to_keep, saves, *([hours] if hours else []), cwd=cwd)
    result = {"restored": None, "saved": [], "latest": None, "kept": []}
    for line in out.splitlines():
        word, _, rest = line.partition(" ")
        if word == "restored":
            result["restored"] = rest
        elif word == "saved":
            result["saved"].append(rest)
        elif word == "latest":
            result["latest"] = rest
        elif word == "kept":
            result["kept"].append(rest)
    return result


def tf_checkpoint():
    v = tf.Variable(0.0)
    return tf.train.Checkpoint(v=v), v


def check_directory(directory, numbers, started, name="ckpt"):
    """What TF sees in `directory`: exactly checkpoints `numbers` (oldest
    first) kept, each with v == its number, the others' files gone."""
    directory = os.path.abspath(directory)
    paths = [os.path.join(directory, f"{name}-{n}") for n in numbers]
    expect_equal("tf.train.latest_checkpoint", tf.train.latest_checkpoint(directory), paths[-1])
    state = tf.train.get_checkpoint_state(directory)
    expect_equal("model_checkpoint_path", state.model_checkpoint_path, paths[-1])
    expect_equal("all_model_checkpoint_paths", list(state.all_model_checkpoint_paths), paths)
    stamps = list(state.all_model_checkpoint_timestamps)
    expect_equal("timestamps", len(stamps), len(paths))
    assert stamps == sorted(stamps), f"timestamps not in order: {stamps}"
    assert started - 1 <= stamps[0] and stamps[-1] <= time.time() + 1, \
        f"timestamps {stamps} outside [{started}, now]"
    checkpoint, v = tf_checkpoint()
    manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=len(numbers))
    expect_equal("CheckpointManager.checkpoints", manager.checkpoints, paths)
    expect_equal("CheckpointManager.latest_checkpoint", manager.latest_checkpoint, paths[-1])
    for n, path in zip(numbers, paths):
        checkpoint.restore(path).assert_consumed()
        expect_equal(f"v in {path}", float(v.numpy()), float(n))
        expect_equal(f"save_counter in {path}", int(checkpoint.save_counter.numpy()), n)
    for n in range(1, numbers[0]):
        gone = os.path.join(directory, f"{name}-{n}.index")
        assert not os.path.exists(gone), f"{gone} should have been deleted"
    return checkpoint, v, manager


def main():
    tool, work = sys.argv[1:3]
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    cases = Cases()
    started = time.time()

    # eager writes into an absolute directory: 5 saves, 3 kept.
    absolute = os.path.join(work, "absolute")

    def eager_absolute():
        result = eager_manager(tool, absolute, 3, 5)
        expect_equal("eager's list", result["kept"],
                     [os.path.join(absolute, f"ckpt-{n}") for n in (3, 4, 5)])
        check_directory(absolute, [3, 4, 5], started)

    cases.run("TF reads eager's manager directory (absolute path, 3 of 5 kept)", eager_absolute)

    def tf_continues_eager():
        checkpoint, v, manager = check_directory(absolute, [3, 4, 5], started)
        checkpoint.restore(manager.latest_checkpoint).assert_consumed()
        v.assign(6.0)
        expect_equal("TF's next save", manager.save(), os.path.join(absolute, "ckpt-6"))
        check_directory(absolute, [4, 5, 6], started)

    cases.run("TF's manager continues eager's directory (deletes eager's ckpt-3)",
              tf_continues_eager)

    # eager writes into a relative directory, from another working directory.
    def eager_relative():
        cwd = os.path.join(work, "cwd")
        os.makedirs(cwd)
        result = eager_manager(tool, "runs/relative", 2, 3, cwd=cwd)
        expect_equal("eager's list", result["kept"], ["runs/relative/ckpt-2", "runs/relative/ckpt-3"])
        check_directory(os.path.join(cwd, "runs", "relative"), [2, 3], started)
        # TF's manager stores paths relative to the directory: a moved
        # directory still names its own checkpoints. So must eager's.
        moved = os.path.join(work, "moved")
        shutil.move(os.path.join(cwd, "runs", "relative"), moved)
        check_directory(moved, [2, 3], started)
        result = eager_manager(tool, moved, 2, 1)
        expect_equal("eager restored after the move", result["restored"],
                     os.path.join(moved, "ckpt-3") + " v=3.0")
        check_directory(moved, [3, 4], started)

    cases.run("TF reads eager's manager directory (relative path, then moved)", eager_relative)

    # TF starts a directory; eager's manager continues it.
    def eager_continues_tf():
        directory = os.path.join(work, "tf_started")
        checkpoint, v = tf_checkpoint()
        manager = tf.train.CheckpointManager(checkpoint, directory, max_to_keep=3)
        for n in range(1, 5):
            v.assign(float(n))
            manager.save()
        before = tf.train.get_checkpoint_state(directory)
        result = eager_manager(tool, directory, 3, 2)
        expect_equal("eager restored", result["restored"],
                     os.path.join(directory, "ckpt-4") + " v=4.0")
        expect_equal("eager saved", result["saved"],
                     [os.path.join(directory, f"ckpt-{n}") for n in (5, 6)])
        expect_equal("eager's list", result["kept"],
                     [os.path.join(directory, f"ckpt-{n}") for n in (4, 5, 6)])
        check_directory(directory, [4, 5, 6], started)
        after = tf.train.get_checkpoint_state(directory)
        expect_equal("ckpt-4's timestamp, as TF wrote it", after.all_model_checkpoint_timestamps[0],
                     before.all_model_checkpoint_timestamps[-1])
        expect_equal("last_preserved_timestamp, as TF wrote it", after.last_preserved_timestamp,
                     before.last_preserved_timestamp)

    cases.run("eager's manager continues a directory TF's manager started", eager_continues_tf)

    # keep_checkpoint_every_n_hours: the same saves by TF's manager and by
    # eager's keep the same files (every one leaving the list, or none).
    def same_files_kept(hours):
        tf_dir = os.path.join(work, f"tf_every_{hours}")
        checkpoint, v = tf_checkpoint()
        manager = tf.train.CheckpointManager(checkpoint, tf_dir, max_to_keep=2,
                                             keep_checkpoint_every_n_hours=hours)
        for n in range(1, 5):
            v.assign(float(n))
            manager.save()
            time.sleep(0.01)
        eager_dir = os.path.join(work, f"eager_every_{hours}")
        eager_manager(tool, eager_dir, 2, 4, hours)
        expect_equal("files kept", sorted(os.listdir(eager_dir)), sorted(os.listdir(tf_dir)))
        expect_equal("latest", tf.train.latest_checkpoint(eager_dir),
                     os.path.join(eager_dir, "ckpt-4"))
        state = tf.train.get_checkpoint_state(eager_dir)
        expect_equal("listed", [os.path.basename(p) for p in state.all_model_checkpoint_paths],
                     ["ckpt-3", "ckpt-4"])
        for n in (1, 2):  # restorable when kept
            if os.path.exists(os.path.join(eager_dir, f"ckpt-{n}.index")):
                checkpoint.restore(os.path.join(eager_dir, f"ckpt-{n}")).assert_consumed()
                expect_equal(f"v in ckpt-{n}", float(v.numpy()), float(n))

    cases.run("keep_checkpoint_every_n_hours=1e-9: TF's and eager's managers keep the same files",
              same_files_kept, 1e-9)
    cases.run("keep_checkpoint_every_n_hours=1000: TF's and eager's managers keep the same files",
              same_files_kept, 1000.0)
    cases.finish()


if __name__ == "__main__":
    main()
