// The executor mode's command line, `--executor FD SLOT HOST_ID_BASE
// KILL_GRACE_MS`: what Executor (executor.cpp) passes when it starts
// rlwb-sandbox-executor, or rlwb-sandbox when that one is missing. Both mains
// read it through these two functions. Header-only: the executor binary is
// static and links no library.
#pragma once

#include <cstdint>
#include <vector>

#include "core/common/command_line.h"
#include "sandbox/executor.h"

namespace rlwb::sandbox {

// Adds --executor, taking its four whole numbers into `values`.
inline CLI::Option* add_executor_option(CLI::App& app, std::vector<int64_t>& values) {
  return app
      .add_option("--executor", values,
                  "run as an executor of the pool: socket FD, SLOT, HOST_ID_BASE (host uid of "
                  "the sandboxed programs, minus the slot) and KILL_GRACE_MS")
      ->type_name("FD SLOT HOST_ID_BASE KILL_GRACE_MS")
      ->expected(4)
      ->check(CLI::Range(int64_t{0}, int64_t{UINT32_MAX}));
}

// Becomes the executor that `values` (from add_executor_option) describe.
[[noreturn]] inline void run_executor(const std::vector<int64_t>& values) {
  ExecutorConfig config;
  config.host_id_base = static_cast<uint32_t>(values.at(2));
  config.kill_grace_ms = static_cast<int>(values.at(3));
  detail::executor_main(static_cast<int>(values.at(0)), static_cast<int>(values.at(1)), config);
}

}  // namespace rlwb::sandbox
