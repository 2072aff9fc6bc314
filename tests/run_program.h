// Runs a program the way a person at a shell would, for the tests of the
// command-line tools: its own process (fork + execv, no shell), stdout and
// stderr captured through temporary files, and a bounded wait -- a program
// still running at the deadline is killed and the test fails, so a hung
// tool cannot hang the suite.
#pragma once

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace rlwb::testing {

struct ProgramOutput {
  int code = -1;  // exit status, or 128 + the signal that ended it
  std::string out, err;
  std::string text;  // stdout, then stderr
};

inline std::string read_and_remove(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(path.c_str());
  return ss.str();
}

inline ProgramOutput run_program(const char* program, const std::vector<std::string>& args,
                                 int timeout_s = 120) {
  static std::atomic<int> runs{0};
  const std::string out_path =
      (std::filesystem::temp_directory_path() /
       ("rlwb-program-" + std::to_string(getpid()) + "-" + std::to_string(runs++) + ".out"))
          .string();
  const std::string err_path = out_path + ".err";
  const pid_t pid = fork();
  if (pid == 0) {
    if (!freopen(out_path.c_str(), "w", stdout) || !freopen(err_path.c_str(), "w", stderr)) _exit(126);
    std::vector<char*> argv{const_cast<char*>(program)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(program, argv.data());
    _exit(127);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << program << " did not finish within " << timeout_s << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ProgramOutput output;
  output.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  output.out = read_and_remove(out_path);
  output.err = read_and_remove(err_path);
  output.text = output.out + output.err;
  return output;
}

}  // namespace rlwb::testing
