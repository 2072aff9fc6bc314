#include "sandbox/seccomp_policy.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {
namespace {

// What interpreters, compilers and ordinary programs need. Deliberately
// absent (so they kill): ptrace, process_vm_*, mount and the new mount API,
// pivot_root, chroot, unshare, setns, bpf, perf_event_open, io_uring_*,
// userfaultfd, keyctl & co, kexec/modules, reboot, swap, quotactl, acct,
// sethostname, clock/time setting, iopl/ioperm, modify_ldt, personality,
// name_to_handle_at/open_by_handle_at, pidfd_getfd, fanotify, *_mempolicy.
const char* const kAllowed[] = {
    // files and descriptors
    "read",
    "write",
    "readv",
    "writev",
    "pread64",
    "pwrite64",
    "preadv",
    "pwritev",
    "preadv2",
    "pwritev2",
    "open",
    "openat",
    "openat2",
    "creat",
    "close",
    "close_range",
    "lseek",
    "dup",
    "dup2",
    "dup3",
    "fcntl",
    "flock",
    "fsync",
    "fdatasync",
    "sync_file_range",
    "truncate",
    "ftruncate",
    "fallocate",
    "fadvise64",
    "readahead",
    "sendfile",
    "copy_file_range",
    "splice",
    "tee",
    "vmsplice",
    "ioctl",
    "stat",
    "fstat",
    "lstat",
    "newfstatat",
    "statx",
    "statfs",
    "fstatfs",
    "access",
    "faccessat",
    "faccessat2",
    "getdents",
    "getdents64",
    "getcwd",
    "chdir",
    "fchdir",
    "rename",
    "renameat",
    "renameat2",
    "mkdir",
    "mkdirat",
    "rmdir",
    "link",
    "linkat",
    "unlink",
    "unlinkat",
    "symlink",
    "symlinkat",
    "readlink",
    "readlinkat",
    "chmod",
    "fchmod",
    "fchmodat",
    "chown",
    "fchown",
    "lchown",
    "fchownat",
    "umask",
    "utime",
    "utimes",
    "utimensat",
    "futimesat",
    "mknod",
    "mknodat",
    "pipe",
    "pipe2",
    "select",
    "pselect6",
    "poll",
    "ppoll",
    "epoll_create",
    "epoll_create1",
    "epoll_ctl",
    "epoll_wait",
    "epoll_pwait",
    "epoll_pwait2",
    "eventfd",
    "eventfd2",
    "signalfd",
    "signalfd4",
    "timerfd_create",
    "timerfd_settime",
    "timerfd_gettime",
    "inotify_init",
    "inotify_init1",
    "inotify_add_watch",
    "inotify_rm_watch",
    "getxattr",
    "lgetxattr",
    "fgetxattr",
    "listxattr",
    "llistxattr",
    "flistxattr",
    // sockets that already exist (socketpair only: socket() answers EPERM)
    "socketpair",
    "sendto",
    "recvfrom",
    "sendmsg",
    "recvmsg",
    "sendmmsg",
    "recvmmsg",
    "shutdown",
    "getsockname",
    "getpeername",
    "getsockopt",
    "setsockopt",
    "connect",
    "bind",
    "listen",
    "accept",
    "accept4",
    // memory
    "brk",
    "mmap",
    "munmap",
    "mremap",
    "mprotect",
    "madvise",
    "mincore",
    "msync",
    "membarrier",
    "pkey_alloc",
    "pkey_free",
    "pkey_mprotect",
    // processes, threads, signals (all confined to the sandbox's pid namespace)
    "fork",
    "vfork",
    "execve",
    "execveat",
    "exit",
    "exit_group",
    "wait4",
    "waitid",
    "kill",
    "tgkill",
    "tkill",
    "rt_sigaction",
    "rt_sigprocmask",
    "rt_sigreturn",
    "rt_sigsuspend",
    "rt_sigpending",
    "rt_sigtimedwait",
    "rt_sigqueueinfo",
    "rt_tgsigqueueinfo",
    "sigaltstack",
    "pause",
    "futex",
    "futex_waitv",
    "set_robust_list",
    "get_robust_list",
    "set_tid_address",
    "rseq",
    "arch_prctl",
    "prctl",
    "getpid",
    "getppid",
    "gettid",
    "getuid",
    "geteuid",
    "getgid",
    "getegid",
    "getresuid",
    "getresgid",
    "getgroups",
    "getpgrp",
    "getpgid",
    "setpgid",
    "getsid",
    "setsid",
    "setuid",
    "setgid",
    "setreuid",
    "setregid",
    "setresuid",
    "setresgid",
    "setgroups",
    "setfsuid",
    "setfsgid",
    "capget",
    "pidfd_open",
    "pidfd_send_signal",
    "sched_yield",
    "sched_getaffinity",
    "sched_setaffinity",
    "sched_getparam",
    "sched_setparam",
    "sched_getscheduler",
    "sched_setscheduler",
    "sched_get_priority_max",
    "sched_get_priority_min",
    "sched_rr_get_interval",
    "getpriority",
    "setpriority",
    "getrlimit",
    "setrlimit",
    "prlimit64",
    "getrusage",
    "times",
    // time and system information
    "nanosleep",
    "clock_nanosleep",
    "clock_gettime",
    "clock_getres",
    "gettimeofday",
    "time",
    "getitimer",
    "setitimer",
    "alarm",
    "timer_create",
    "timer_settime",
    "timer_gettime",
    "timer_getoverrun",
    "timer_delete",
    "uname",
    "sysinfo",
    "getcpu",
    "getrandom",
    // System V IPC and POSIX message queues stay inside the private IPC namespace
    "shmget",
    "shmat",
    "shmdt",
    "shmctl",
    "semget",
    "semop",
    "semtimedop",
    "semctl",
    "msgget",
    "msgsnd",
    "msgrcv",
    "msgctl",
    "mq_open",
    "mq_unlink",
    "mq_timedsend",
    "mq_timedreceive",
    "mq_notify",
    "mq_getsetattr",
};

struct ErrnoRule {
  const char* name;
  int error;
};
const ErrnoRule kErrno[] = {
    {"socket", EPERM},        // runtimes probe it; no network exists anyway
    {"memfd_create", EPERM},  // memory outside RLIMIT_AS and the work dir
    {"clone3", ENOSYS},       // flags live in memory the filter cannot read
    {"mlock", EPERM},        {"mlock2", EPERM},     {"munlock", EPERM},
    {"mlockall", EPERM},     {"munlockall", EPERM},
};

// Namespace flags a plain clone() may not carry (CLONE_NEWTIME shares its
// bit with the exit signal byte of clone(), so it cannot be tested here; it
// is only accepted by clone3 and unshare, which are refused).
constexpr uint64_t kNamespaceFlags =
    CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET;

struct Ctx {
  scmp_filter_ctx ctx;
  explicit Ctx(uint32_t def) : ctx(seccomp_init(def)) {
    if (!ctx) throw SandboxError("seccomp: libseccomp could not create a filter");
  }
  ~Ctx() { seccomp_release(ctx); }
};

void check(int rc, const std::string& what) {
  if (rc < 0) throw SandboxError("seccomp: " + what + ": " + std::strerror(-rc));
}

}  // namespace

const std::vector<std::string>& allowed_syscalls() {
  static const std::vector<std::string> names(std::begin(kAllowed), std::end(kAllowed));
  return names;
}

SeccompProgram build_seccomp_program() {
  Ctx c(SCMP_ACT_KILL_PROCESS);
  check(seccomp_attr_set(c.ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS), "bad-arch action");
  // The executor sets no_new_privs itself, right before installing.
  check(seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_NNP, 0), "nnp attribute");
  // A binary tree over syscall numbers instead of a linear list: installing
  // the filter makes the kernel evaluate it for every syscall of both x86
  // ABIs (to cache the always-allowed ones), which costs ~0.8 ms per exec
  // with the linear form and a tenth of that with the tree.
  check(seccomp_attr_set(c.ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2), "binary tree optimisation");
  for (const char* name : kAllowed) {
    int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // not on this architecture / libseccomp
    check(seccomp_rule_add(c.ctx, SCMP_ACT_ALLOW, nr, 0), std::string("allow ") + name);
  }
  for (const ErrnoRule& r : kErrno) {
    int nr = seccomp_syscall_resolve_name(r.name);
    if (nr == __NR_SCMP_ERROR) continue;
    check(seccomp_rule_add(c.ctx, SCMP_ACT_ERRNO(r.error), nr, 0), std::string("errno ") + r.name);
  }
  check(seccomp_rule_add(c.ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
                         SCMP_A0(SCMP_CMP_MASKED_EQ, kNamespaceFlags, 0)),
        "clone without namespace flags");

  // Export the BPF through a memfd and read it back.
  int fd = memfd_create("rlwb-seccomp", MFD_CLOEXEC);
  if (fd < 0) throw SandboxError(std::string("seccomp: memfd_create: ") + std::strerror(errno));
  int rc = seccomp_export_bpf(c.ctx, fd);
  if (rc < 0) {
    close(fd);
    check(rc, "export");
  }
  off_t size = lseek(fd, 0, SEEK_END);
  SeccompProgram prog;
  prog.filter.resize(size / sizeof(sock_filter));
  ssize_t got = pread(fd, prog.filter.data(), prog.filter.size() * sizeof(sock_filter), 0);
  close(fd);
  if (got != static_cast<ssize_t>(prog.filter.size() * sizeof(sock_filter)) || prog.filter.empty())
    throw SandboxError("seccomp: could not read the exported filter back");
  return prog;
}

}  // namespace rlwb::sandbox
