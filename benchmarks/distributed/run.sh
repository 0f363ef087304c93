#!/usr/bin/env bash
# The distributed numbers of benchmarks/README.md ("Many processes"):
#   bash benchmarks/distributed/run.sh [BUILD_DIR]
# 1. allreduce: eager's bucketed averaging against raw MPI_Allreduce, 2 ranks;
# 2. a 1 GiB distributed save on 1 and 2 ranks;
# 3. the main job's examples/s, 1 epoch: 1 rank x 2 threads, 2 ranks x 1 thread.
# As root, OpenMPI wants OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
set -euo pipefail
build=${1:-build}
bench=$build/benchmarks/distributed/distributed_benchmark
mpirun=(mpirun --oversubscribe -np)
echo "== allreduce, 2 ranks"
"${mpirun[@]}" 2 "$bench" --benchmark_filter='Allreduce|Average'
for ranks in 1 2; do
  echo "== 1 GiB save, $ranks rank(s)"
  "${mpirun[@]}" "$ranks" "$bench" --benchmark_filter=DistributedSave
done
echo "== main job, 1 epoch: 1 rank x 2 threads"
"$build/examples/fashion_mnist" --epochs 1 2>/dev/null | grep '^trained'
echo "== main job, 1 epoch: 2 ranks x 1 thread"
"${mpirun[@]}" 2 "$build/examples/fashion_mnist" --epochs 1 2>/dev/null | grep '^trained'
