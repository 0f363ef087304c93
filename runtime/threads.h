#pragma once

// Threads: how many cores one op, or one restored tensor, may use.
//
// The limit is runtime's, below ops and saving, because both obey it.
// eager has one process-wide pool of worker threads, sized to the machine by
// default (the cores this process may run on). Matrix products (float32 and
// float64 MatMul) and large elementwise ops split their work over it; small
// ops run inline on the calling thread, so a one-element `a + b` never pays a
// hand-off. Like torch::set_num_threads, SetNumThreads applies to every
// thread of the process from the next op on.
//
// It limits restores too: BundleReader reads a tensor of 4 MiB or more on
// min(2, GetNumThreads()) threads (the calling thread and saving's helper
// thread), unless BundleReaderOptions::num_threads is set explicitly
// (saving/bundle/bundle_reader.h). SetNumThreads(1) keeps all of eager's work
// on the threads that call it.
//
// The pool itself and the loop over it are ops' (ops/parallel.h).
//
// Results do not depend on the thread count: work is cut into blocks fixed
// by the shapes alone (never by the number of threads), and each block is
// computed the same way whichever thread takes it. MatMul cuts the larger
// output dimension (never the inner sum) into blocks, each a single-threaded
// GEMM with the bits of one OpenBLAS call: one block per core of the
// machine, or, for float32 on OpenBLAS's SkylakeX kernels, where such cuts
// are measured and tested to change no bits, one block per thread (one
// thread: one call; two threads: cut where the two threads' measured speeds
// say both finish together; ops/internal/gemm.h). There, blocks that suit it
// run eager's own AVX-512 kernel, which packs only B and so repeats less
// work per block (ops/internal/avx512_sgemm.h). Reductions of at least 2^17 elements split
// their outputs into blocks (each output summed in the same order as on one
// thread), or, when everything reduces to one value, sum blocks of 2^15
// elements alone and add the block sums left to right (ops/reduction_ops.cc).

namespace eager {

// Uses at most `num_threads` threads per op and per restored tensor (1:
// everything on the calling thread). Throws InvalidArgumentError unless
// num_threads >= 1. Thread-safe; applies to work started after it, on every
// thread.
void SetNumThreads(int num_threads);

// The current limit: SetNumThreads's value, or the number of cores this
// process may run on.
int GetNumThreads();

}  // namespace eager
