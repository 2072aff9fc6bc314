// Internals shared by the executor process (executor.cpp) and the init it
// clones into each sandbox (sandbox_init.cpp). Not part of the API.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <initializer_list>

#include "sandbox/seccomp_policy.h"

namespace rlwb::sandbox::detail {

// uid and gid of the program inside its user namespace.
inline constexpr uint32_t kInsideId = 1000;
// How often init samples the memory and CPU of the program's processes.
inline constexpr int kWatchdogTickMs = 10;

struct InitArgs {
  int ctl = -1;    // SEQPACKET to the executor
  int out_w = -1;  // program stdout
  int err_w = -1;  // program stderr
  const SeccompProgram* seccomp = nullptr;
};

// Entry point of a sandbox's pid 1 (passed to clone()); never returns.
int init_main(void* args);

// Closes every descriptor >= 3 that is not listed.
void close_fds_except(std::initializer_list<int> keep);

}  // namespace rlwb::sandbox::detail
