#!/usr/bin/env bash
# The main job's CNN from the command line, kept short: `--model cnn` trains
# the convolutional model (12 steps, then stops as on Ctrl-C and saves), the
# checkpoint verifies and holds the conv layers' kernels and Adam's slots for
# them, TensorBoard summaries are written, and a second run resumes from it.
#   fashion_mnist_cnn_test.sh FASHION_MNIST EAGER_CKPT WORK_DIR
set -euo pipefail
bin=$1 ckpt_tool=$2 work=$3
rm -rf "$work" && mkdir -p "$work"
fail() {
  echo "FAIL: $*"
  exit 1
}

# --help states each model's default number of epochs, not one for both.
"$bin" --help | grep -q "default 2 for --model mlp, 3 for cnn" ||
  fail "--help does not state both --epochs defaults: $("$bin" --help | grep -A1 -e --epochs)"

status=0
"$bin" --model cnn --stop_after_steps 12 --checkpoint_dir "$work/ckpt" --logdir "$work/logs" \
  >"$work/first.log" 2>"$work/first.err" || status=$?
[ "$status" = 130 ] || { cat "$work/first.log" "$work/first.err"; fail "exit status $status"; }
grep -q "^epoch 1/3 " "$work/first.err" || fail "the CNN's default is 3 epochs: $(cat "$work/first.err")"
grep -q "^interrupted after 12 steps; saved $work/ckpt/ckpt-1$" "$work/first.log" ||
  fail "$(cat "$work/first.log")"
"$ckpt_tool" verify "$work/ckpt/ckpt-1" || fail "eager-ckpt verify"
"$ckpt_tool" list "$work/ckpt/ckpt-1" >"$work/list.txt"
for key in model/conv1/kernel/.ATTRIBUTES/VARIABLE_VALUE \
  model/conv2/bias/.ATTRIBUTES/VARIABLE_VALUE \
  model/conv2/kernel/.OPTIMIZER_SLOT/optimizer/m/.ATTRIBUTES/VARIABLE_VALUE \
  model/hidden/kernel/.ATTRIBUTES/VARIABLE_VALUE; do
  grep -q "$key" "$work/list.txt" || fail "no $key in: $(cat "$work/list.txt")"
done
grep "model/conv1/kernel/.ATTRIBUTES" "$work/list.txt" | grep -q "\[5,5,1,32\]" ||
  fail "conv1's kernel is not [5,5,1,32]: $(grep conv1 "$work/list.txt")"
ls "$work/logs"/events.out.tfevents.* >/dev/null || fail "no event file in $work/logs"

status=0
"$bin" --model cnn --stop_after_steps 20 --checkpoint_dir "$work/ckpt" \
  >"$work/second.log" 2>"$work/second.err" || status=$?
[ "$status" = 130 ] || { cat "$work/second.log" "$work/second.err"; fail "exit status $status"; }
grep -q "^resumed from $work/ckpt/ckpt-1 at epoch 1, step 12$" "$work/second.err" ||
  fail "did not resume: $(cat "$work/second.err")"
grep -q "^interrupted after 20 steps; saved $work/ckpt/ckpt-2$" "$work/second.log" ||
  fail "$(cat "$work/second.log")"
echo "PASS: the CNN trains, saves, resumes"
