// rlwb-sandbox: the isolated code executor service (and a one-off runner).
// See sandbox/cli.h for the commands and docs/sandbox.md for the design.
// `rlwb-sandbox --executor FD SLOT HOST_ID_BASE KILL_GRACE_MS` is the
// executor mode that executor.cpp starts when rlwb-sandbox-executor is
// missing; it is not for people.
#include <cstdlib>
#include <iostream>

#include "sandbox/cli.h"
#include "sandbox/executor.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (rlwb::sandbox::detail::is_executor_command(args))
    rlwb::sandbox::detail::executor_command(args);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << rlwb::sandbox::cli_usage();
    return args.empty() ? 2 : 0;
  }
  return rlwb::sandbox::cli_main(rlwb::sandbox::parse_cli_args(args), std::cout, std::cerr);
}
