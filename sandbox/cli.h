// The sandbox's command line, shared by `rlwb sandbox ...` (app/cmd_sandbox.cpp)
// and the rlwb-sandbox executable (sandbox_main.cpp):
//   run --lang LANG FILE [--stdin FILE] [--json] [--endpoint E]
//       [--wall-ms N] [--cpu-ms N] [--memory-mb N] [--timeout-ms N]
//       runs FILE once and prints the verdict (one JSON object with --json).
//       Exit status 0 whatever the verdict; 1 when the sandbox itself failed
//       (sandbox_error); 2 for bad usage (unknown language, missing file).
//       Without --endpoint it runs in-process; with it, on a service.
//   serve [--endpoint E] [--executors N] [--max-queued N]
//       the service (service.h) until SIGINT/SIGTERM.
#pragma once

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

namespace rlwb::sandbox {

struct CliArgs {
  std::string command;  // run | serve
  std::vector<std::string> positional;
  std::map<std::string, std::string> flags;  // --name VALUE; a flag with no value is "true"
};

// argv after the program name (rlwb-sandbox) or after "sandbox" (rlwb).
CliArgs parse_cli_args(const std::vector<std::string>& args);
int cli_main(const CliArgs& args, std::ostream& out, std::ostream& err);
const char* cli_usage();

}  // namespace rlwb::sandbox
