#!/usr/bin/env bash
# The main job on 2 ranks (issue 29): `mpirun -np 2 fashion_mnist` trains
# epoch 1 with every batch split between the ranks, prints once (rank 0
# only) and saves distributed checkpoints (one data file per rank); then a
# plain single process resumes from them and trains epoch 2 to the main
# job's bar (>= 85% test accuracy).
#   bash fashion_mnist_mpirun_test.sh FASHION_MNIST WORKDIR MPIRUN...
set -euo pipefail
fashion_mnist=$1 work=$2
shift 2
rm -rf "$work"
mkdir -p "$work"
"$@" 2 "$fashion_mnist" --epochs 1 --checkpoint_dir "$work/ckpt" >"$work/np2.out" 2>&1 ||
  { cat "$work/np2.out"; echo "FAIL: mpirun -np 2 fashion_mnist"; exit 1; }
cat "$work/np2.out"
[ "$(grep -c '^test accuracy' "$work/np2.out")" -eq 1 ] ||
  { echo "FAIL: not exactly one rank printed the result"; exit 1; }
grep -qE '^test accuracy: (8[2-9]|9[0-9])\.' "$work/np2.out" ||
  { echo "FAIL: one epoch on 2 ranks below 82%"; exit 1; }
[ -s "$work/ckpt/ckpt-1.data-00000-of-00002" ] && [ -s "$work/ckpt/ckpt-1.data-00001-of-00002" ] ||
  { ls "$work/ckpt"; echo "FAIL: no 2-rank checkpoint"; exit 1; }
"$fashion_mnist" --epochs 2 --checkpoint_dir "$work/ckpt" >"$work/np1.out" 2>&1 ||
  { cat "$work/np1.out"; echo "FAIL: the single-process resume"; exit 1; }
cat "$work/np1.out"
grep -q "resumed from $work/ckpt/ckpt-1 at epoch 2" "$work/np1.out" &&
  grep -qE '^test accuracy: (8[5-9]|9[0-9])\.' "$work/np1.out" ||
  { echo "FAIL: the resumed run"; exit 1; }
echo "PASS: 2 ranks trained and saved, one process resumed and reached 85%"
