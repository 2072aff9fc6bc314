// rlwb-sandbox-executor: the executor process (executor.h) and nothing else.
// It exists to be small: linked statically, without ZeroMQ, it maps a
// handful of regions instead of rlwb-sandbox's ~120, and every sandbox's
// init and program process start as copies of it (fork cost and exit cost
// scale with the mappings). executor.cpp starts it as
// `rlwb-sandbox-executor --executor FD SLOT HOST_ID_BASE KILL_GRACE_MS`.
#include <cstdio>
#include <string>
#include <vector>

#include "sandbox/executor.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (rlwb::sandbox::detail::is_executor_command(args))
    rlwb::sandbox::detail::executor_command(args);
  std::fprintf(stderr,
               "rlwb-sandbox-executor is started by the sandbox's executor "
               "pool, not by hand "
               "(usage: --executor FD SLOT HOST_ID_BASE KILL_GRACE_MS)\n");
  return 2;
}
