// The real one-node Slurm of the Slurm launch tests: scripts/slurm-local.sh
// starts it on loopback (once: later calls find it answering) and
// ensure_local_slurm() points this process's SLURM_CONF at it, so that
// srun, squeue and scancel -- the controller's and the test's -- reach it.
// Returns "" when it answers, else why not (the tests skip with it).
#pragma once

#include "tests/test_paths.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace rlwb::testing {

inline std::string ensure_local_slurm() {
  static const std::string why_not = [] {
    std::string command = "timeout 90 " + std::string(kSourceDir) + "/scripts/slurm-local.sh start 2>&1";
    FILE* pipe = popen(command.c_str(), "r");
    if (!pipe) return std::string("cannot run scripts/slurm-local.sh");
    std::string output;
    char buf[512];
    while (fgets(buf, sizeof buf, pipe)) output += buf;
    if (pclose(pipe) != 0) return "scripts/slurm-local.sh start failed: " + output;
    auto at = output.find("SLURM_CONF=");
    if (at == std::string::npos) return "scripts/slurm-local.sh printed no SLURM_CONF: " + output;
    std::string conf = output.substr(at + 11);
    conf = conf.substr(0, conf.find('\n'));
    setenv("SLURM_CONF", conf.c_str(), 1);
    return std::string();
  }();
  return why_not;
}

// What a command printed (stdout), for squeue and friends in the tests.
inline std::string command_output(const std::string& command) {
  std::string output;
  if (FILE* pipe = popen((command + " 2>/dev/null").c_str(), "r")) {
    char buf[512];
    while (fgets(buf, sizeof buf, pipe)) output += buf;
    pclose(pipe);
  }
  return output;
}

}  // namespace rlwb::testing
