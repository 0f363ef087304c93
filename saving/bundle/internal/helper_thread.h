#pragma once

// RunShared: lets saving's helper thread join the calling thread on one
// piece of work. Used by BundleReader to read a large tensor on two cores
// (eager's intra-op pool lives in ops/, which saving may not depend on).
//
// There is one helper thread per process, started on first use and parked
// (after a short spin) when idle; it joins one caller at a time. The work
// is shared, not split in advance: both threads claim pieces from the same
// counter until none is left, so a helper that is busy, slow to wake (a
// loaded machine) or descheduled costs the caller at most the piece it
// holds, never half the work. The result must not depend on who ran which
// piece.

namespace eager::internal {

// Runs work(context) on this thread and, when the helper is free, on the
// helper at the same time. Returns once this thread's call has returned and
// the helper's, if it started, has too; a helper call not yet started then
// is withdrawn. So `work` must claim its pieces from state shared through
// `context`, and return when no piece is left to claim. It must not throw.
void RunShared(void (*work)(void*), void* context);

// How many offers the helper has taken so far in this process (for tests).
long HelperThreadJobs();
// How many times RunShared has offered work to the helper so far in this
// process, taken or not (for tests: a caller that ran alone never offered).
long HelperThreadOffers();

}  // namespace eager::internal
