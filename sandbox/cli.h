// The sandbox's commands, shared by `rlwb sandbox ...` (app/cmd_sandbox.cpp)
// and the rlwb-sandbox executable (sandbox_main.cpp):
//   run --lang LANG FILE [--stdin FILE] [--json] [--endpoint E]
//       [--wall-ms N] [--cpu-ms N] [--memory-mb N] [--timeout-ms N]
//       runs FILE once and prints the verdict (one JSON object with --json).
//       Exit status 0 whatever the verdict; 1 when the sandbox itself failed
//       (sandbox_error); 2 for bad usage (unknown language, missing file).
//       Without --endpoint it runs in-process; with it, on a service.
//   serve [--endpoint E] [--executors N] [--max-queued N]
//       the service (service.h) until SIGINT/SIGTERM.
// Each command's --help lists its flags with their defaults.
#pragma once

#include <iosfwd>
#include <vector>

#include "core/common/command_line.h"

namespace rlwb::sandbox {

// Adds `run` and `serve` to `parent` (rlwb-sandbox's top level, or the
// `sandbox` subcommand of rlwb). Verdicts go to `out`, the service's log to
// `log`.
std::vector<core::Subcommand> add_sandbox_commands(CLI::App& parent, std::ostream& out, std::ostream& log);

}  // namespace rlwb::sandbox
