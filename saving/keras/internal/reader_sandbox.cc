#include "saving/keras/internal/reader_sandbox.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <cstdint>
#include <vector>

namespace eager::keras_internal {
namespace {

#if defined(__x86_64__)
constexpr uint32_t kArch = AUDIT_ARCH_X86_64;
#elif defined(__aarch64__)
constexpr uint32_t kArch = AUDIT_ARCH_AARCH64;
#else
constexpr uint32_t kArch = 0;  // no filter
#endif

// What reading an open file with libhdf5 and glibc's malloc takes.
constexpr long kAllowed[] = {
    SYS_read,         SYS_pread64,        SYS_lseek,        SYS_fstat,
#ifdef SYS_newfstatat
    SYS_newfstatat,
#endif
#ifdef SYS_statx
    SYS_statx,
#endif
    SYS_mmap,         SYS_munmap,         SYS_mremap,       SYS_mprotect,
#ifdef SYS_brk
    SYS_brk,
#endif
    SYS_madvise,      SYS_close,          SYS_futex,        SYS_getpid,
    SYS_gettid,       SYS_clock_gettime,  SYS_gettimeofday, SYS_sched_yield,
    SYS_rt_sigreturn, SYS_rt_sigprocmask, SYS_exit,         SYS_exit_group,
};

}  // namespace

bool ConfineToReading(int pipe_fd) {
  if (kArch == 0) return false;
  std::vector<sock_filter> program;
  auto add = [&](uint16_t code, uint32_t k, uint8_t jt = 0, uint8_t jf = 0) {
    program.push_back(sock_filter{code, jt, jf, k});
  };
  // Another architecture's system call numbers mean other calls: refuse.
  add(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch));
  add(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0);
  add(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
  add(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr));
  // write(pipe_fd, ...) only.
  add(BPF_JMP | BPF_JEQ | BPF_K, SYS_write, 0, 4);
  add(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[0]));
  add(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(pipe_fd), 0, 1);
  add(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  add(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  for (long nr : kAllowed) {
    add(BPF_JMP | BPF_JEQ | BPF_K, static_cast<uint32_t>(nr), 0, 1);
    add(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
  }
  add(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM);
  sock_fprog fprog{static_cast<unsigned short>(program.size()), program.data()};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return false;
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog) == 0;
}

}  // namespace eager::keras_internal
