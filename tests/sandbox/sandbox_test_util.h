// Helpers shared by the sandbox tests: one in-process sandbox per test
// program, and a look at the host's process table (nothing a sandbox
// starts may outlive its run).
#pragma once

#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "sandbox/sandbox.h"

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

struct HostProcess {
  int pid = 0;
  std::string name;
  // A prepared sandbox's process waiting for its job: pid 2 of its pid
  // namespace (after a run ends, nothing of it survives, and its main
  // process was that pid 2).
  bool spare_stage = false;
};

// Host processes whose real uid is one of this test's sandbox host uids.
inline std::vector<HostProcess> host_processes_of_sandbox_users() {
  const uint32_t base = host_id_base();
  std::vector<HostProcess> found;
  DIR* d = opendir("/proc");
  while (dirent* e = d ? readdir(d) : nullptr) {
    if (e->d_name[0] < '1' || e->d_name[0] > '9') continue;
    std::ifstream status(std::string("/proc/") + e->d_name + "/status");
    std::string line, name, nspid;
    bool ours = false;
    while (std::getline(status, line)) {
      if (line.rfind("Name:", 0) == 0) name = line.substr(6);
      if (line.rfind("Uid:", 0) == 0) {
        uint32_t uid = static_cast<uint32_t>(std::stoul(line.substr(5)));
        ours = uid >= base && uid < base + kExecutors;
      }
      if (line.rfind("NSpid:", 0) == 0) nspid = line.substr(6);
    }
    if (!ours) continue;
    bool pid2 = nspid.size() >= 2 && nspid.compare(nspid.size() - 2, 2, "\t2") == 0;
    found.push_back({std::atoi(e->d_name), name, pid2});
  }
  if (d) closedir(d);
  return found;
}

inline std::string describe_processes(const std::vector<HostProcess>& ps) {
  std::string s;
  for (auto& p : ps) s += std::to_string(p.pid) + ":" + p.name + (p.spare_stage ? "(spare)" : "") + " ";
  return s;
}

// Processes of the programs themselves (spare sandboxes waiting for a job excluded).
inline size_t running_program_processes() {
  size_t n = 0;
  for (auto& p : host_processes_of_sandbox_users()) n += !p.spare_stage;
  return n;
}

// Passes when nothing a program started is left on the host; only the
// prepared sandboxes of idle executors (one each at most) may exist.
// Waits up to ~1 s: the kernel reaps a killed pid namespace asynchronously.
inline ::testing::AssertionResult host_has_no_sandbox_processes() {
  for (int i = 0; i < 100; ++i) {
    auto ps = host_processes_of_sandbox_users();
    size_t spares = 0;
    for (auto& p : ps) spares += p.spare_stage;
    if (spares == ps.size() && spares <= static_cast<size_t>(kExecutors))
      return ::testing::AssertionSuccess();
    usleep(10000);
  }
  return ::testing::AssertionFailure()
         << "sandbox processes left on the host: " << describe_processes(host_processes_of_sandbox_users());
}

}  // namespace rlwb::sandbox::testing
