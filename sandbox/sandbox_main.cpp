// rlwb-sandbox: the isolated code executor service (and a one-off runner).
// See sandbox/cli.h for the commands and docs/sandbox.md for the design.
// `rlwb-sandbox --executor FD SLOT HOST_ID_BASE KILL_GRACE_MS` is the
// executor mode that executor.cpp starts when rlwb-sandbox-executor is
// missing; it is not for people, so --help does not list it.
#include <iostream>

#include "sandbox/cli.h"
#include "sandbox/executor_command_line.h"

int main(int argc, char** argv) {
  CLI::App app{
      "rlwb-sandbox: run programs isolated (seccomp, namespaces, limits), once or as a "
      "service",
      "rlwb-sandbox"};
  std::vector<int64_t> executor;
  CLI::Option* executor_option = rlwb::sandbox::add_executor_option(app, executor)->group("");
  std::vector<rlwb::core::Subcommand> commands =
      rlwb::sandbox::add_sandbox_commands(app, std::cout, std::cerr);
  // A command, or the executor mode instead of one.
  app.require_subcommand(0, 1);
  for (auto& command : commands) command.app->excludes(executor_option);
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  if (executor_option->count() > 0) rlwb::sandbox::run_executor(executor);
  return rlwb::core::run_parsed_subcommand(app, commands);
}
