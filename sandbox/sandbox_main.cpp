// rlwb-sandbox: the isolated code executor service (and a one-off runner).
// See sandbox/cli.h for the commands and docs/sandbox.md for the design.
#include "sandbox/cli.h"

#include <iostream>

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << rlwb::sandbox::cli_usage();
    return args.empty() ? 2 : 0;
  }
  return rlwb::sandbox::cli_main(rlwb::sandbox::parse_cli_args(args), std::cout, std::cerr);
}
