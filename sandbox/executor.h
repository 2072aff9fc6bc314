// One executor: a process that runs one job at a time, each in a sandbox
// of its own. How an execution is isolated:
//   - the executor process (root on the host) lives in a private mount
//     namespace whose root is the tree of sandbox_root.h;
//   - per execution it clones a fresh "init" into new user, pid, net,
//     mount, ipc, uts and cgroup namespaces; the user namespace maps only
//     the sandbox user (uid/gid 1000 inside) to an unprivileged host uid of
//     this executor's own; init mounts a fresh /proc and a size-limited
//     tmpfs work directory (/tmp) and writes the job's files there;
//   - init spawns the program with rlimits (CPU, address space, processes,
//     file size, open files, no core), the sandbox uid/gid, no capabilities,
//     no_new_privs and the seccomp allowlist (seccomp_policy.h);
//   - init reaps everything, samples the processes' memory and CPU every
//     10 ms, and when the program's main process ends kills whatever is
//     left (orphans included); the executor enforces the wall clock and the
//     output caps and kills init (hence the whole pid namespace) if need be.
// The namespaces and the mounts of the next sandbox are prepared while the
// executor waits for its next job, so a job only pays for spawning the
// program. Each prepared sandbox serves exactly one execution.
//
// Executor (owner side) starts the process by fork() and talks to it over a
// socket pair; if the process dies or stops answering within the job's
// bounds, the job gets a sandbox_error result and the process is replaced.
// Used by ExecutorPool (executor_pool.h).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/exec_job.h"

namespace rlwb::sandbox {

struct ExecutorConfig {
  // Host uid/gid of the sandboxed programs: base + executor slot. Pick a
  // range no real user or service on the host uses.
  uint32_t host_id_base = 990000;
  // Kill grace: how long init gets to kill and reap after the wall limit
  // before the executor kills it outright.
  int kill_grace_ms = 1000;
  // Bound on starting the executor process (root file system + a probe).
  int start_timeout_ms = 15000;
  // The executor process runs this program (rlwb-sandbox-executor, or
  // rlwb-sandbox in its executor mode), so that it -- and every sandbox,
  // which starts as a copy of it -- is small whatever process owns it (the
  // rlwb CLI carries LibTorch). "" finds it (sandbox/sandbox_binary.h); if
  // it cannot be found the executor is a fork() of the owner instead, and a
  // program's peak memory then includes the owner's resident pages (the
  // process is a copy of it until it execs).
  std::string executable;
};

// What the kernel allows, as probed by an executor at start.
struct KernelSupport {
  std::vector<std::string> namespaces;  // created per execution
  std::vector<std::string> fallbacks;   // substituted features (every verdict carries these)
};

namespace detail {
// The executor process: `rlwb-sandbox-executor --executor FD SLOT HOST_ID_BASE
// KILL_GRACE_MS` (or the same arguments to rlwb-sandbox), read by
// executor_command_line.h.
[[noreturn]] void executor_main(int sock, int slot, const ExecutorConfig& config);
}  // namespace detail

class Executor {
 public:
  // Starts the executor process; throws SandboxError with the kernel's
  // reason when it cannot build a sandbox (e.g. not root, no user namespaces).
  explicit Executor(int slot, ExecutorConfig config = {});
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Runs one job (not thread-safe: one caller at a time). Never throws for
  // the program's behaviour; a failure of the sandbox itself comes back as
  // ExecResult::sandbox_error.
  ExecResult exec(const ExecJob& job);

  // True once the executor has prepared its next sandbox (a job sent now
  // starts at once); waits up to `timeout`. Also true if the executor is
  // broken: exec() then reports and restarts it.
  bool wait_ready(std::chrono::milliseconds timeout);

  const KernelSupport& kernel_support() const;
  pid_t pid() const;
  int slot() const;
  uint32_t host_uid() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::sandbox
