"""Issue 25, item 5: TensorBoard's own event reader (the multiplexer that
`tensorboard --logdir` serves from) loads the main job's --logdir, and every
scalar in it is what the main job printed.

    tensorboard_logdir.py LOGDIR OUTPUT

OUTPUT is what `fashion_mnist --logdir LOGDIR` printed (stdout and stderr):
progress lines `epoch E/N [...] K/STEPS loss L ...` every 100 steps and at
each epoch's end, `epoch E/N: accuracy R% (raw weights), A% (EMA weights) at
step S` per epoch, `trained T steps in ...` and `test accuracy: R% ..., A% ...`.
Values are compared at the precision printed.
"""
import math
import re
import sys

from common import Cases, expect_equal

from tensorboard.backend.event_processing import plugin_event_multiplexer
from tensorboard.util import tensor_util


def main():
    logdir, output = sys.argv[1:3]
    printed = open(output, errors="replace").read()
    cases = Cases()

    multiplexer = plugin_event_multiplexer.EventMultiplexer(
        size_guidance={"scalars": 0, "tensors": 0})  # 0: keep every point
    multiplexer.AddRunsFromDirectory(logdir)
    multiplexer.Reload()
    runs = multiplexer.PluginRunToTagToContent("scalars")
    cases.run("TensorBoard finds one run with the main job's four scalar tags", expect_equal,
              "runs and tags", {run: sorted(tags) for run, tags in runs.items()},
              {".": ["accuracy/ema", "accuracy/raw", "examples_per_second", "loss"]})
    if not runs:
        cases.finish()
    run = next(iter(runs))

    def series(tag):
        events = multiplexer.Tensors(run, tag)
        return {e.step: float(tensor_util.make_ndarray(e.tensor_proto)) for e in events}, events

    loss, loss_events = series("loss")
    rate, _ = series("examples_per_second")
    raw, _ = series("accuracy/raw")
    ema, _ = series("accuracy/ema")
    trained = int(re.search(r"^trained (\d+) steps in", printed, re.M).group(1))

    def every_step():
        expect_equal("loss steps", sorted(loss), list(range(1, trained + 1)))
        expect_equal("examples_per_second steps", sorted(rate), list(range(1, trained + 1)))
        walls = [e.wall_time for e in loss_events]
        assert walls == sorted(walls), "wall times go back"
        assert all(math.isfinite(v) and v > 0 for v in rate.values()), "examples/s not > 0"

    cases.run(f"loss and examples/s at every step 1..{trained}", every_step)

    def losses_as_printed():
        lines = re.findall(r"^epoch (\d+)/\d+ \[[^\]]*\] (\d+)/(\d+) loss (\S+) ", printed, re.M)
        assert lines, "no progress line printed"
        for epoch, step, steps, value in lines:
            global_step = (int(epoch) - 1) * int(steps) + int(step)
            expect_equal(f"loss at step {global_step}", f"{loss[global_step]:.4f}", value)
        last = re.search(r"^trained \d+ steps .*, last loss (\S+)$", printed, re.M).group(1)
        expect_equal("last loss", f"{loss[trained]:.4f}", last)
        return len(lines)

    cases.run("every loss printed (progress lines, last loss) is TensorBoard's", losses_as_printed)

    def accuracies_as_printed():
        lines = re.findall(r"^epoch (\d+)/\d+: accuracy (\S+)% \(raw weights\), (\S+)% "
                           r"\(EMA weights\) at step (\d+)$", printed, re.M)
        expect_equal("epochs printed", len(lines), len(raw))
        expect_equal("accuracy steps", sorted(raw), sorted(ema))
        for _, raw_text, ema_text, step in lines:
            expect_equal(f"accuracy/raw at {step}", f"{100 * raw[int(step)]:.2f}", raw_text)
            expect_equal(f"accuracy/ema at {step}", f"{100 * ema[int(step)]:.2f}", ema_text)
        final = re.search(r"^test accuracy: (\S+)% \(raw weights\), (\S+)% \(EMA weights\)$",
                          printed, re.M)
        expect_equal("final raw", f"{100 * raw[max(raw)]:.2f}", final.group(1))
        expect_equal("final EMA", f"{100 * ema[max(ema)]:.2f}", final.group(2))

    cases.run("every accuracy printed (per epoch, final) is TensorBoard's", accuracies_as_printed)
    cases.finish()


if __name__ == "__main__":
    main()
