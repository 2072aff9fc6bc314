// rlwb-sandbox-executor: the executor process (executor.h) and nothing else.
// It exists to be small: linked statically, without ZeroMQ, it maps a
// handful of regions instead of rlwb-sandbox's ~120, and every sandbox's
// init and program process start as copies of it (fork cost and exit cost
// scale with the mappings). executor.cpp starts it as
// `rlwb-sandbox-executor --executor FD SLOT HOST_ID_BASE KILL_GRACE_MS`.
#include "sandbox/executor_command_line.h"

int main(int argc, char** argv) {
  std::vector<int64_t> executor;
  {
    CLI::App app{
        "rlwb-sandbox-executor: one executor of the sandbox's pool; the pool starts it, "
        "not a person",
        "rlwb-sandbox-executor"};
    rlwb::sandbox::add_executor_option(app, executor)->required();
    if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  }  // the parser is gone before the executor starts: every sandbox is a copy of this process
  rlwb::sandbox::run_executor(executor);
}
