#!/usr/bin/env bash
# Builds tests/fuzz/bundle_fuzzer with clang (libFuzzer + ASan + UBSan) in its
# own build folder and runs it for a bounded time on a seed corpus made from
# the real TensorFlow checkpoints and the files our own tests wrote.
#   bash tests/fuzz/run.sh [SECONDS (default 60)] [extra libFuzzer flags...]
# Environment: FUZZ_BUILD_DIR (default build-fuzz), REALDATA (default
# ../shared/realdata), JOBS (default 2). Needs clang and libclang-rt-14-dev.
# Exits non-zero when the fuzzer finds a crash (the input is saved as
# $FUZZ_BUILD_DIR/crash-*).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
shift || true
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
realdata=${REALDATA:-$root/../shared/realdata}

flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DEAGER_BUILD_FUZZERS=ON -DEAGER_BUILD_TESTS=OFF -DEAGER_BUILD_EXAMPLES=OFF \
  -DEAGER_BUILD_BENCHMARKS=OFF -DEAGER_INSTALL=OFF -DEAGER_WERROR=OFF \
  ${CCACHE_LAUNCHER:+-DCMAKE_CXX_COMPILER_LAUNCHER=$CCACHE_LAUNCHER} >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target bundle_fuzzer

corpus=$build/corpus
seeds=$build/seeds
rm -rf "$seeds"
# SEED_DIRS: more folders of checkpoints to seed from (e.g. build/tests/tmp,
# which holds what our own tests wrote; walking it takes minutes).
python3 "$root/tests/fuzz/make_seeds.py" "$seeds" "$realdata" ${SEED_DIRS:-}
mkdir -p "$corpus"
cd "$build"
# The .weights.h5 reader forks a child for libhdf5 (saving/keras/internal/
# h5_file.h); the child inherits this process's sanitizer and libFuzzer
# hooks. libhdf5 allocates what a crafted header declares (412 GB was seen):
# under ASan no address-space budget can hold the child, so ASan's malloc
# returns null as glibc's does in a release build (libhdf5 then fails
# cleanly), and libFuzzer's per-malloc limit sits above this machine's
# memory (a malloc past it fails that way too). The parent's memory is still
# bounded by -rss_limit_mb; its C++ allocations (operator new) still abort.
export ASAN_OPTIONS=${ASAN_OPTIONS:-allocator_may_return_null=1}
exec ./tests/fuzz/bundle_fuzzer "$corpus" "$seeds" -max_total_time="$seconds" -timeout=10 \
  -rss_limit_mb=2048 -malloc_limit_mb=65536 -max_len=1048576 -print_final_stats=1 "$@"
