// Shared by the benchmarks with a Python peer (bench_generate,
// bench_train_step, bench_grpo_step): the tiny random Llama both sides run,
// running the peer (once, printing one JSON line last, or served: one
// request at a time), pinning both sides to the same cores, and the
// figures' small helpers.
#pragma once

#include <torch/torch.h>

#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/bench_record.h"
#include "workers/model/transformer_config.h"

namespace rlwb::bench {

using workers::model::TransformerConfig;

inline TransformerConfig bench_llama_config() {
  TransformerConfig c;
  c.architecture = workers::model::Architecture::kLlama;
  c.vocab_size = 2048;
  c.hidden_size = 256;
  c.intermediate_size = 688;
  c.num_layers = 4;
  c.num_heads = 8;
  c.num_kv_heads = 4;
  c.max_position_embeddings = 1024;
  c.rope_theta = 10000.0;
  c.eos_token_id = -1;  // no stop token: both sides generate exactly max_new_tokens
  c.pad_token_id = 0;
  return c;
}

inline std::string describe(const TransformerConfig& c) {
  return "tiny random Llama (hidden " + std::to_string(c.hidden_size) + ", " + std::to_string(c.num_layers) +
         " layers, " + std::to_string(c.num_heads) + " heads / " + std::to_string(c.num_kv_heads) +
         " kv, ffn " + std::to_string(c.intermediate_size) + ", vocab " + std::to_string(c.vocab_size) + ")";
}

inline std::string reference_python() {
  if (const char* p = std::getenv("RLWB_PYTHON")) return p;
  std::string home =
      std::getenv("RLWB_HOME")
          ? std::getenv("RLWB_HOME")
          : std::string(std::getenv("HOME") ? std::getenv("HOME") : "/root") + "/.local/share/rlwb";
  return home + "/venv/bin/python";
}

// The bench/*.py scripts sit next to this file. __FILE__ may be relative to
// the build folder (ccache's base dir), so the source dir wins when known.
inline std::filesystem::path bench_dir() {
#ifdef RLWB_SOURCE_DIR
  return std::filesystem::path(RLWB_SOURCE_DIR) / "bench";
#else
  return std::filesystem::absolute(std::filesystem::path(__FILE__).parent_path());
#endif
}

// Runs `python bench/<script> args...`; returns the JSON of its last line,
// or an object with "error" when it failed.
inline nlohmann::json run_reference(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = "'" + reference_python() + "' '" + (bench_dir() / script).string() + "'";
  for (const auto& a : args) cmd += " '" + a + "'";
  cmd += " 2>&1";
  std::string out;
  FILE* pipe = ::popen(cmd.c_str(), "r");
  if (pipe == nullptr) return {{"error", "popen failed: " + cmd}};
  std::array<char, 4096> buf{};
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  // The result is the last line (it may hold nested objects).
  size_t end = out.find_last_not_of("\n");
  const size_t start = end == std::string::npos ? end : out.rfind('\n', end);
  const std::string last =
      end == std::string::npos ? "" : out.substr(start == std::string::npos ? 0 : start + 1);
  if (status != 0 || last.empty() || last[0] != '{')
    return {{"error", "reference failed (" + cmd + "):\n" + out}};
  try {
    return nlohmann::json::parse(last);
  } catch (const nlohmann::json::exception&) {
    return {{"error", "cannot parse the reference's output:\n" + out}};
  }
}

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

// CPU seconds of this process (all its threads). On a shared, loaded
// machine wall time mostly measures the other tenants; CPU time measures
// the work each side does, so both are reported.
inline double cpu_seconds() {
  timespec t{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Pins this process, and so every process it starts afterwards (workers,
// the Python peer), to `cpus`: both sides of a benchmark on the same cores.
inline void pin_to_cores(const std::vector<int>& cpus) {
  cpu_set_t set;
  CPU_ZERO(&set);
  for (int c : cpus) CPU_SET(c, &set);
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("sched_setaffinity");
}

// "0,1" for {0, 1}.
inline std::string core_list(const std::vector<int>& cpus) {
  std::string s;
  for (int c : cpus) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

}  // namespace rlwb::bench
