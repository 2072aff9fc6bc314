// Where the sandbox's programs are: rlwb-sandbox (the service and CLI) and
// rlwb-sandbox-executor (the executor process only: a small static program,
// so that every sandbox, which starts as a copy of it, is cheap to create).
// No ZeroMQ here: the executor program links this. Used by executor.cpp
// and service_launch.h.
#pragma once

#include <string>

namespace rlwb::sandbox {

// $RLWB_SANDBOX if set; else rlwb-sandbox next to the running program, or in
// ../sandbox/ of a build tree. Throws SandboxError saying where it looked.
std::string find_sandbox_binary();

// The program an executor process runs: rlwb-sandbox-executor next to the
// rlwb-sandbox that find_sandbox_binary() finds, else that rlwb-sandbox
// itself (its `--executor` mode does the same, at a higher cost per
// sandbox). Throws SandboxError when neither is found.
std::string find_executor_binary();

}  // namespace rlwb::sandbox
