// ServedPeer: a Python peer script kept up for many requests, so that a
// benchmark can alternate RLWB and its peer step by step
// (bench_train_step). Finds the interpreter and the script as
// bench_model_common.h's run_reference does.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_model_common.h"

namespace rlwb::bench {

// A peer script that stays up and answers one request line at a time
// (bench_train_step_torch.py): the benchmark can then alternate the sides
// step by step instead of run by run, so each pair sees the host in the
// same state. The script prints one JSON line when ready, then one JSON
// line per request; other lines (warnings) are kept for error messages.
// Every read waits at most its timeout; the destructor sends "quit" and
// kills the script if it has not exited 10 s later.
class ServedPeer {
 public:
  ServedPeer(const std::string& script, const std::vector<std::string>& args, double ready_timeout_s) {
    ::signal(SIGPIPE, SIG_IGN);  // a peer that died is an error reply, not the end of the benchmark
    int to_child[2], from_child[2];
    if (::pipe2(to_child, O_CLOEXEC) != 0 || ::pipe2(from_child, O_CLOEXEC) != 0) {
      ready_ = {{"error", "pipe failed"}};
      return;
    }
    const std::string python = reference_python(), path = (bench_dir() / script).string();
    std::vector<std::string> words = {python, path};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, to_child[0], 0);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 1);
    posix_spawn_file_actions_adddup2(&actions, from_child[1], 2);
    const int spawned = ::posix_spawn(&pid_, python.c_str(), &actions, nullptr, argv.data(), ::environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(to_child[0]);
    ::close(from_child[1]);
    to_ = to_child[1];
    from_ = from_child[0];
    command_ = python + " " + path;
    if (spawned != 0) {
      pid_ = -1;
      ready_ = {{"error", "cannot start " + command_ + ": " + std::strerror(spawned)}};
      return;
    }
    ready_ = read_reply(ready_timeout_s);
  }
  ~ServedPeer() {
    if (to_ >= 0) {
      const char quit[] = "quit\n";
      [[maybe_unused]] auto n = ::write(to_, quit, sizeof quit - 1);
      ::close(to_);
    }
    if (pid_ > 0) {
      int status = 0;
      for (int i = 0; i < 100 && ::waitpid(pid_, &status, WNOHANG) == 0; ++i) ::usleep(100000);
      if (::waitpid(pid_, &status, WNOHANG) == 0) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
      }
    }
    if (from_ >= 0) ::close(from_);
  }
  ServedPeer(const ServedPeer&) = delete;
  ServedPeer& operator=(const ServedPeer&) = delete;

  // The ready line, or {"error": ...} when the script failed to start.
  const nlohmann::json& ready() const { return ready_; }

  // Sends `request` (one line) and returns the reply's JSON, or
  // {"error": ...} when the script died, or did not answer within
  // `timeout_s`.
  nlohmann::json request(const std::string& request, double timeout_s) {
    if (ready_.contains("error")) return ready_;
    const std::string line = request + "\n";
    if (::write(to_, line.data(), line.size()) != static_cast<ssize_t>(line.size()))
      return {{"error", command_ + " stopped reading its requests:\n" + log_}};
    return read_reply(timeout_s);
  }

 private:
  nlohmann::json read_reply(double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    for (;;) {
      for (size_t end; (end = pending_.find('\n')) != std::string::npos;) {
        const std::string line = pending_.substr(0, end);
        pending_.erase(0, end + 1);
        if (!line.empty() && line[0] == '{') {
          try {
            return nlohmann::json::parse(line);
          } catch (const nlohmann::json::exception&) {
          }
        }
        log_ += line + "\n";
      }
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0)
        return {{"error", command_ + " gave no answer in " + std::to_string(timeout_s) + " s:\n" + log_}};
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) < 0 && errno != EINTR)
        return {{"error", std::string("poll failed: ") + std::strerror(errno)}};
      if (p.revents == 0) continue;
      char buf[4096];
      const ssize_t n = ::read(from_, buf, sizeof buf);
      if (n > 0) {
        pending_.append(buf, static_cast<size_t>(n));
      } else if (n == 0) {
        return {{"error", command_ + " exited:\n" + log_ + pending_}};
      } else if (errno != EINTR) {
        return {{"error", std::string("read failed: ") + std::strerror(errno)}};
      }
    }
  }

  pid_t pid_ = -1;
  int to_ = -1, from_ = -1;
  std::string command_, pending_, log_;
  nlohmann::json ready_;
};

}  // namespace rlwb::bench
