#pragma once

// Intra-op threads: how many cores one op may use.
//
// eager has one process-wide pool of worker threads, sized to the machine by
// default (the cores this process may run on). Matrix products (float32 and
// float64 MatMul) and large elementwise ops split their work over it; small
// ops run inline on the calling thread, so a one-element `a + b` never pays a
// hand-off. Like torch::set_num_threads, SetNumThreads applies to every
// thread of the process from the next op on.
//
// Elementwise results do not depend on the thread count: each element is
// computed the same way whoever computes it (blocks start at fixed offsets),
// and reductions run on one thread in a fixed order. MatMul is repeatable
// bit for bit at a given thread count, but float32 products may differ in
// the last bits between thread counts: OpenBLAS splits the output (never
// the inner sum) across threads, and its AVX-512 kernels sum the edge tiles
// of each share in a different order than full tiles.

namespace eager {

// Uses at most `num_threads` threads per op (1: everything on the calling
// thread). Throws InvalidArgumentError unless num_threads >= 1.
void SetNumThreads(int num_threads);

// The current limit: SetNumThreads's value, or the number of cores this
// process may run on.
int GetNumThreads();

}  // namespace eager
