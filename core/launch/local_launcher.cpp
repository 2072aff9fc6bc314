#include "core/launch/local_launcher.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace rlwb::core {
namespace {

std::atomic<bool> g_interrupted{false};
std::atomic<int> g_interrupt_count{0};

// Children of every live launcher, for the second-Ctrl-C emergency exit.
// A fixed array so the signal handler touches no allocator.
constexpr int kMaxTracked = 1024;
std::atomic<pid_t> g_tracked[kMaxTracked];

void track(pid_t pid) {
  for (auto& slot : g_tracked) {
    pid_t expected = 0;
    if (slot.compare_exchange_strong(expected, pid)) return;
  }
}
void untrack(pid_t pid) {
  for (auto& slot : g_tracked) {
    pid_t expected = pid;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

void on_interrupt(int) {
  g_interrupted = true;
  if (g_interrupt_count.fetch_add(1) >= 1) {
    for (auto& slot : g_tracked) {
      pid_t pid = slot.load();
      if (pid > 0) kill(pid, SIGKILL);
    }
    _exit(130);
  }
}

}  // namespace

std::string ProcessExit::describe() const {
  if (signal != 0) return "killed by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exited with code " + std::to_string(exit_code);
}

LocalLauncher::LocalLauncher(std::string log_dir) : log_dir_(std::move(log_dir)) {
  std::filesystem::create_directories(log_dir_);
}

LocalLauncher::~LocalLauncher() { stop_all(); }

std::string LocalLauncher::log_path(const std::string& name) const {
  std::string file = name;
  std::replace(file.begin(), file.end(), '/', '-');
  return log_dir_ + "/" + file + ".log";
}

pid_t LocalLauncher::start(const ProcessSpec& spec) {
  if (spec.argv.empty()) throw std::runtime_error("launcher: process '" + spec.name + "' has no program");
  // Everything the child needs is prepared before fork: after fork only
  // async-signal-safe calls are allowed.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string entry(*e);
    auto key = entry.substr(0, entry.find('='));
    if (!spec.env.count(key)) env_strings.push_back(entry);
  }
  for (auto& [k, v] : spec.env) env_strings.push_back(k + "=" + v);
  std::vector<char*> argv, envp;
  for (auto& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : env_strings) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);

  std::string log = log_path(spec.name);
  int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log_fd < 0) throw std::runtime_error("launcher: cannot open log " + log + ": " + strerror(errno));
  pid_t parent = getpid();

  std::lock_guard<std::mutex> lock(mu_);
  pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    throw std::runtime_error("launcher: fork failed for '" + spec.name + "': " + strerror(errno));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // parent died before prctl took effect
    setpgid(0, 0);
    dup2(log_fd, STDOUT_FILENO);
    dup2(log_fd, STDERR_FILENO);
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    execvpe(argv[0], argv.data(),
            envp.data());  // a bare name (an exec prefix's "ip", "ssh") is looked up in PATH
    dprintf(STDERR_FILENO, "launcher: cannot execute %s: %s\n", argv[0], strerror(errno));
    _exit(127);
  }
  close(log_fd);
  live_[pid] = spec.name;
  track(pid);
  return pid;
}

std::vector<ProcessExit> LocalLauncher::poll_exits() {
  std::vector<ProcessExit> exits;
  std::lock_guard<std::mutex> lock(mu_);
  for (auto it = live_.begin(); it != live_.end();) {
    int status = 0;
    pid_t r = waitpid(it->first, &status, WNOHANG);
    if (r == it->first) {
      ProcessExit e{it->second, it->first};
      if (WIFEXITED(status)) e.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
      exits.push_back(e);
      untrack(it->first);
      it = live_.erase(it);
    } else {
      ++it;
    }
  }
  return exits;
}

void LocalLauncher::stop_all(std::chrono::milliseconds grace) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [pid, name] : live_) kill(pid, SIGTERM);
  }
  auto deadline = std::chrono::steady_clock::now() + grace;
  while (!live_pids().empty() && std::chrono::steady_clock::now() < deadline) {
    poll_exits();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  std::lock_guard<std::mutex> lock(mu_);
  for (auto& [pid, name] : live_) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);  // SIGKILL cannot be ignored: this returns promptly
    untrack(pid);
  }
  live_.clear();
}

std::vector<pid_t> LocalLauncher::live_pids() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<pid_t> pids;
  for (auto& [pid, name] : live_) pids.push_back(pid);
  return pids;
}

std::string LocalLauncher::log_tail(const std::string& name, size_t max_bytes) const {
  std::ifstream in(log_path(name), std::ios::binary | std::ios::ate);
  if (!in) return "";
  auto size = static_cast<size_t>(in.tellg());
  size_t start = size > max_bytes ? size - max_bytes : 0;
  in.seekg(static_cast<std::streamoff>(start));
  std::string text(size - start, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool interrupt_requested() { return g_interrupted.load(); }
void clear_interrupt() {
  g_interrupted = false;
  g_interrupt_count = 0;
}

}  // namespace rlwb::core
