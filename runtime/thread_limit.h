#pragma once

// The process-wide limit on the threads eager runs one piece of work on: an
// op on ops' intra-op pool (ops/threads.h), a read of one large tensor on
// saving's reading threads (saving/bundle/bundle_reader.h). Users set it with
// eager::SetNumThreads, which lives in ops/; it is kept here, below both
// layers, so that saving, which may not depend on ops, follows the same
// setting. For ops/ and saving/ only; not installed (cmake/package.cmake): not user API.
//
// Thread-safe; a change applies to work started after it, on every thread.

namespace eager::internal {

// SetThreadLimit's last value, else the cores this process may run on
// (machine_cores.h).
int ThreadLimit();

// REQUIRES: limit >= 1 (SetNumThreads checks and throws).
void SetThreadLimit(int limit);

}  // namespace eager::internal
