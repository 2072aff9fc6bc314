// Starts the rlwb-sandbox executable as a service for a test and stops it
// (SIGTERM, then SIGKILL) at the end. Readiness is a ping, bounded.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "sandbox/client.h"
#include "tests/test_paths.h"

namespace rlwb::sandbox::testing {

class ServiceProcess {
 public:
  explicit ServiceProcess(int executors, std::vector<std::string> extra = {}) {
    endpoint_ = "ipc:///tmp/rlwb-sandbox-test-" + std::to_string(getpid()) + "-" +
                std::to_string(counter()++) + ".sock";
    std::vector<std::string> args = {
        rlwb::testing::kSandboxBin, "serve", "--endpoint", endpoint_, "--executors",
        std::to_string(executors)};
    args.insert(args.end(), extra.begin(), extra.end());
    log_ = endpoint_.substr(std::string("ipc://").size()) + ".log";
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<char*> argv;
      for (auto& a : args) argv.push_back(a.data());
      argv.push_back(nullptr);
      FILE* f = std::fopen(log_.c_str(), "w");
      if (f) dup2(fileno(f), 2);
      execv(argv[0], argv.data());
      _exit(127);
    }
    SandboxClient probe(endpoint_);
    auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < until) {
      try {
        probe.ping(std::chrono::milliseconds(500));
        return;
      } catch (const std::exception&) {
      }
    }
    ADD_FAILURE() << "rlwb-sandbox did not answer a ping within 20 s; log: " << log();
  }
  ~ServiceProcess() {
    stop();
    std::remove(endpoint_.substr(std::string("ipc://").size()).c_str());
    std::remove(log_.c_str());
  }

  // Returns the exit status (or -1 if it had to be killed).
  int stop() {
    if (pid_ <= 0) return status_;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 500; ++i) {
      int st;
      if (waitpid(pid_, &st, WNOHANG) == pid_) {
        pid_ = -1;
        return status_ = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
      }
      usleep(10000);
    }
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    return status_ = -1;
  }

  const std::string& endpoint() const { return endpoint_; }
  pid_t pid() const { return pid_; }
  std::string log() const {
    std::ifstream in(log_);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  }
  // VmRSS / VmHWM of the service process, in KiB.
  int64_t memory_kb(const char* field) const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind(field, 0) == 0) return std::stoll(line.substr(std::string(field).size() + 1));
    return -1;
  }

 private:
  static int& counter() {
    static int c = 0;
    return c;
  }
  std::string endpoint_, log_;
  pid_t pid_ = -1;
  int status_ = -1;
};

}  // namespace rlwb::sandbox::testing
