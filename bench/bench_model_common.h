// Shared by the benchmarks with a Python peer (bench_generate,
// bench_train_step, bench_grpo_step): the tiny random Llama both sides run,
// running the peer once (printing one JSON line last; served_peer.h keeps
// one up for many requests), pinning both sides to the same cores, and
// the figures' small helpers.
#pragma once

#include <torch/torch.h>

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
