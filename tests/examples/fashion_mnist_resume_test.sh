#!/usr/bin/env bash
# The main job resumes exactly: 2 epochs uninterrupted versus 1 epoch, then
# run again to 2 epochs from the CheckpointManager directory. The accuracy
# lines must be the same and the final checkpoints (model, Adam, EMA, step,
# data-order state, save_counter) byte-identical; every file passes tfckpt.
#   fashion_mnist_resume_test.sh FASHION_MNIST WORK_DIR [TFCKPT]
set -euo pipefail
bin=$1 work=$2 tfckpt=${3:-}
rm -rf "$work" && mkdir -p "$work"

"$bin" --epochs 2 --checkpoint_dir "$work/full" >"$work/full.log" 2>/dev/null
"$bin" --epochs 1 --checkpoint_dir "$work/resumed" >"$work/first.log" 2>/dev/null
"$bin" --epochs 2 --checkpoint_dir "$work/resumed" >"$work/second.log" 2>"$work/second.err"

grep -q "resumed from $work/resumed/ckpt-1 at epoch 2, step 0" "$work/second.err" ||
  { echo "FAIL: the second run did not resume from ckpt-1"; cat "$work/second.err"; exit 1; }
full=$(grep "test accuracy" "$work/full.log")
resumed=$(grep "test accuracy" "$work/second.log")
echo "uninterrupted: $full"
echo "resumed:       $resumed"
[ "$full" = "$resumed" ] || { echo "FAIL: accuracy lines differ"; exit 1; }
for f in ckpt-2.index ckpt-2.data-00000-of-00001; do
  cmp "$work/full/$f" "$work/resumed/$f" || { echo "FAIL: $f differs"; exit 1; }
done
if [ -n "$tfckpt" ] && [ -f "$tfckpt" ]; then
  python3 "$tfckpt" verify -q "$work/resumed/ckpt-2" || { echo "FAIL: tfckpt verify"; exit 1; }
fi
echo "PASS: resumed run is bit-identical to the uninterrupted one"
