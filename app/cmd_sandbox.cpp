// rlwb sandbox run|serve ...: the code sandbox's own commands (sandbox/cli.h),
// under rlwb. Nothing of its own: the same flags as rlwb-sandbox.
#include <iostream>

#include "app/commands.h"
#include "sandbox/cli.h"

namespace rlwb::app {

std::vector<core::Subcommand> add_sandbox_commands(CLI::App& rlwb) {
  CLI::App* sandbox = rlwb.add_subcommand(
      "sandbox", "run a program isolated (seccomp, namespaces, limits), or serve the pool");
  sandbox->require_subcommand(1);
  return sandbox::add_sandbox_commands(*sandbox, std::cout, std::cerr);
}

}  // namespace rlwb::app
