#pragma once

// The cores this process may run on (its CPU affinity), read once. Shared by
// ops' intra-op pool and saving's reading threads, which may not depend on
// each other. For ops/ and saving/ only; not installed (cmake/package.cmake): not user API.

namespace eager::internal {

// CPUs in the process's affinity mask at first call; std::thread's
// hardware_concurrency when the mask cannot be read; at least 1.
int MachineCores();

}  // namespace eager::internal
