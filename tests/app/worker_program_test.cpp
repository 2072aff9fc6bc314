// rlwb-worker starts without LibTorch's CUDA libraries, and a rank of a
// cuda pool replaces itself with rlwb-worker-cuda, the same program linked
// with them (app/CMakeLists.txt): checked on the running processes, what
// they execute and which libraries they have mapped, with a controller
// address nobody answers (the worker waits for it; the test kills it).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/test_paths.h"

namespace fs = std::filesystem;

namespace {

pid_t start_worker(const std::string& device) {
  const pid_t pid = fork();
  if (pid == 0) {
    const char* argv[] = {
        rlwb::testing::kWorkerBin, "--controller", "tcp://127.0.0.1:9", "--device", device.c_str(), nullptr};
    execv(rlwb::testing::kWorkerBin, const_cast<char**>(argv));
    _exit(127);
  }
  return pid;
}

std::string maps_of(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Threads of `pid` (its /proc/<pid>/task entries).
int threads_of(pid_t pid) {
  std::error_code ec;
  int n = 0;
  for (fs::directory_iterator it("/proc/" + std::to_string(pid) + "/task", ec), end; !ec && it != end;
       it.increment(ec))
    ++n;
  return n;
}

// What `pid` runs and what it has mapped, once it runs `expected` and its
// main has started a second thread (ZeroMQ's, dialing the controller): the
// loader maps every library the program needs before any of its code runs,
// so by then the maps are whole. (Waiting only for LibTorch's CPU library
// read the maps while the loader was still mapping the CUDA ones.) After
// 30 s, what it last ran.
std::pair<std::string, std::string> program_and_maps(pid_t pid, const std::string& expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  std::pair<std::string, std::string> seen;
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    const bool running = !ec && exe.filename().string() == expected && threads_of(pid) >= 2;
    seen = {ec ? "" : exe.filename().string(), maps_of(pid)};
    if (running) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return seen;
}

void stop(pid_t pid) {
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
}

TEST(WorkerProgram, ACpuRankRunsWithoutTheCudaLibraries) {
  const pid_t pid = start_worker("cpu");
  const auto [program, maps] = program_and_maps(pid, "rlwb-worker");
  stop(pid);
  EXPECT_EQ(program, "rlwb-worker");
  EXPECT_EQ(maps.find("libtorch_cuda.so"), std::string::npos) << "rlwb-worker loaded LibTorch's CUDA library";
  EXPECT_EQ(maps.find("libcublas"), std::string::npos);
}

TEST(WorkerProgram, ACudaRankBecomesRlwbWorkerCudaInTheSameProcess) {
  const pid_t pid = start_worker("cuda:0");
  const auto [program, maps] = program_and_maps(pid, "rlwb-worker-cuda");
  stop(pid);
  EXPECT_EQ(program, "rlwb-worker-cuda") << "the launcher's pid runs the CUDA program";
  EXPECT_NE(maps.find("libtorch_cuda.so"), std::string::npos);
}

}  // namespace
