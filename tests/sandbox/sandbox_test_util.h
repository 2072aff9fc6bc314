// Helpers shared by the sandbox tests: one in-process sandbox per test
// program, and a look at the host's process table (nothing a sandbox
// starts may outlive its run).
#pragma once

#include "sandbox/sandbox.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <dirent.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace rlwb::sandbox::testing {

inline constexpr int kExecutors = 2;

// Host uids of this test process's sandboxes: a range of its own, so that
// test programs running in parallel do not see each other's processes.
inline uint32_t host_id_base() { return 1000000 + static_cast<uint32_t>(getpid()) * 4; }

inline LocalSandbox& shared_sandbox() {
  static std::unique_ptr<LocalSandbox> box = [] {
    PoolOptions o;
    o.executors = kExecutors;
    o.executor.host_id_base = host_id_base();
    return std::make_unique<LocalSandbox>(o);
  }();
  return *box;
}

// Tight limits so that tests of runaway programs end quickly.
inline Limits quick_limits() {
  Limits l;
  l.wall_ms = 3000;
  l.cpu_ms = 1000;
  return l;
}

inline Verdict run_program(Language lang, const std::string& program, Limits limits = quick_limits(),
                           const std::string& stdin_data = "") {
  RunRequest r;
  r.language = lang;
  r.program = program;
  r.limits = limits;
  r.stdin_data = stdin_data;
  return shared_sandbox().run(r);
}

// Host processes (pid, command) whose real uid is one of the sandbox's host uids.
inline std::vector<std::pair<int, std::string>> host_processes_of_sandbox_users() {
  const uint32_t base = host_id_base();
  std::vector<std::pair<int, std::string>> found;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + e->d_name + "/status");
    std::string line, name;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(6);
      if (line.rfind("Uid:", 0) == 0) {
        uint32_t uid = static_cast<uint32_t>(std::stoul(line.substr(5)));
        if (uid >= base && uid < base + kExecutors) found.emplace_back(std::atoi(e->d_name), name);
        break;
      }
    }
  }
  if (d) closedir(d);
  return found;
}

inline std::string describe_processes(const std::vector<std::pair<int, std::string>>& ps) {
  std::string s;
  for (auto& [pid, name] : ps) s += std::to_string(pid) + ":" + name + " ";
  return s;
}

// Passes when no sandbox process is left on the host (waits up to ~1 s:
// the kernel reaps a killed pid namespace asynchronously).
inline ::testing::AssertionResult host_has_no_sandbox_processes() {
  for (int i = 0; i < 100; ++i) {
    auto ps = host_processes_of_sandbox_users();
    if (ps.empty()) return ::testing::AssertionSuccess();
    usleep(10000);
  }
  return ::testing::AssertionFailure() << "sandbox processes left on the host: "
                                       << describe_processes(host_processes_of_sandbox_users());
}

}  // namespace rlwb::sandbox::testing
