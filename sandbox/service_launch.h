// Starting the rlwb-sandbox service from another program (the controller,
// when a graph uses the code reward): where the executable is, its command
// line (for core::LocalLauncher), and a bounded wait until it answers.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "sandbox/sandbox_binary.h"  // find_sandbox_binary()

namespace rlwb::sandbox {

// {binary, "serve", "--endpoint", endpoint[, "--executors", N]}; executors 0: one per CPU.
std::vector<std::string> service_argv(const std::string& binary, const std::string& endpoint,
                                      int executors = 0);

// Pings until the service answers; throws SandboxError after `timeout`.
void wait_for_service(const std::string& endpoint, std::chrono::milliseconds timeout);

}  // namespace rlwb::sandbox
