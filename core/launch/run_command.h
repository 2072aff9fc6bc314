// Runs a short command (scontrol, squeue, scancel, ...) and returns what it
// printed, with a bound: a command still running at the deadline is killed
// and reported as timed out, so no caller waits on a hung tool. The program
// is looked up in PATH. No LibTorch.
#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace rlwb::core {

struct CommandResult {
  int exit_code = -1;  // -1: could not start, killed by a signal, or timed out
  bool timed_out = false;
  std::string output;  // stdout and stderr together
  bool ok() const { return exit_code == 0; }
};

// `input` is written to the command's stdin (then closed); without it stdin
// is /dev/null.
CommandResult run_command(const std::vector<std::string>& argv,
                          std::chrono::milliseconds timeout = std::chrono::seconds(10),
                          const std::string& input = {});

}  // namespace rlwb::core
