#pragma once

// The libhdf5 reading child's last line of defence (h5_file.h): libhdf5 has
// memory-safety bugs on crafted files (the fuzzer found buffer overruns in
// H5HG_read), and the child runs with the caller's privileges. Once the file
// is open, ConfineToReading() lets the child make only the system calls
// reading it and answering the parent need: read/pread/lseek/fstat on open
// descriptors, memory management, write to its one pipe, exit. Everything
// else (open, unlink, connect, execve, kill, write to any other descriptor,
// ...) fails with EPERM, so code an overrun might run cannot reach the
// user's files or the network. Linux seccomp-bpf, x86-64 and AArch64.

namespace eager::keras_internal {

// Confines the calling process for the rest of its life. `pipe_fd` is the
// one descriptor it may write to. Returns false (and confines nothing) where
// the kernel or the architecture has no seccomp filters; the caller then
// runs unconfined, as before.
bool ConfineToReading(int pipe_fd);

}  // namespace eager::keras_internal
