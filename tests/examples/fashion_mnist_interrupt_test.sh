#!/usr/bin/env bash
# Ctrl-C mid-epoch: the main job, sent SIGINT while it trains, saves a
# checkpoint and exits cleanly (status 130, "interrupted after N steps; saved
# ...ckpt-1"); the checkpoint verifies; the next run resumes from it at step N
# of the same epoch and ends with the same accuracy line and the same tensors
# (all but save_counter) as an uninterrupted 1-epoch run.
#   fashion_mnist_interrupt_test.sh FASHION_MNIST EAGER_CKPT WORK_DIR [TFCKPT]
set -euo pipefail
bin=$1 ckpt_tool=$2 work=$3 tfckpt=${4:-}
rm -rf "$work" && mkdir -p "$work"
fail() {
  echo "FAIL: $*"
  exit 1
}

# The progress bar writes a line every 100 steps to a file: the first line
# means the SIGINT handler is installed and training is under way.
"$bin" --epochs 1 --checkpoint_dir "$work/interrupted" >"$work/first.log" 2>"$work/first.err" &
pid=$!
for _ in $(seq 600); do
  grep -q "epoch 1/1 .* 100/" "$work/first.err" && break
  kill -0 "$pid" 2>/dev/null || break
  sleep 0.1
done
kill -INT "$pid" 2>/dev/null || true
status=0
wait "$pid" || status=$?
[ "$status" = 130 ] || { cat "$work/first.log" "$work/first.err"; fail "exit status $status, expected 130"; }
line=$(grep "^interrupted after" "$work/first.log") || fail "no 'interrupted after' line"
echo "$line"
[[ $line =~ ^interrupted\ after\ ([0-9]+)\ steps\;\ saved\ (.*)$ ]] || fail "unexpected line: $line"
steps=${BASH_REMATCH[1]} saved=${BASH_REMATCH[2]}
[ "$saved" = "$work/interrupted/ckpt-1" ] || fail "saved $saved, expected $work/interrupted/ckpt-1"
# Mid-epoch: 937 steps make the epoch (60000 / 64, remainder dropped).
((steps >= 100 && steps < 937)) || fail "interrupted after $steps steps, expected mid-epoch"
grep -q '^model_checkpoint_path: "ckpt-1"$' "$work/interrupted/checkpoint" || fail "state file"
"$ckpt_tool" verify "$saved" || fail "eager-ckpt verify $saved"
if [ -n "$tfckpt" ] && [ -f "$tfckpt" ]; then
  python3 "$tfckpt" verify -q "$saved" || fail "tfckpt verify $saved"
fi

"$bin" --epochs 1 --checkpoint_dir "$work/interrupted" >"$work/second.log" 2>"$work/second.err" ||
  fail "the resumed run failed: $(cat "$work/second.err")"
grep -q "^resumed from $saved at epoch 1, step $steps$" "$work/second.err" ||
  { cat "$work/second.err"; fail "the second run did not resume from ckpt-1 at step $steps"; }
grep -q "^trained 937 steps" "$work/second.log" || fail "resumed run: $(cat "$work/second.log")"

"$bin" --epochs 1 --checkpoint_dir "$work/uninterrupted" >"$work/full.log" 2>/dev/null
full=$(grep "test accuracy" "$work/full.log")
resumed=$(grep "test accuracy" "$work/second.log")
echo "uninterrupted: $full"
echo "resumed:       $resumed"
[ "$full" = "$resumed" ] || fail "accuracy lines differ"
# Only the save counter differs (2 saves against 1); exit code 3 = differ.
status=0
"$ckpt_tool" diff "$work/uninterrupted/ckpt-1" "$work/interrupted/ckpt-2" >"$work/diff.txt" || status=$?
[ "$status" = 3 ] || fail "eager-ckpt diff exit status $status: $(cat "$work/diff.txt")"
grep -q "^0 added, 0 removed, 1 changed, " "$work/diff.txt" &&
  grep -q "^~ save_counter/.ATTRIBUTES/VARIABLE_VALUE " "$work/diff.txt" ||
  fail "the resumed checkpoint differs: $(cat "$work/diff.txt")"
echo "PASS: interrupted by SIGINT, saved, resumed, same result as uninterrupted"
