#include "sandbox/classify.h"

#include <signal.h>

#include <cstring>
#include <string>

namespace rlwb::sandbox {
namespace {

bool contains(const std::string& s, const char* needle) { return s.find(needle) != std::string::npos; }

std::string signal_text(int sig) {
  const char* name = sigabbrev_np(sig);
  return std::to_string(sig) + (name ? std::string(" (SIG") + name + ")" : "");
}

// The program's own classification, before the compile phase re-labels it.
Verdict classify_run(ExecResult& r, const Limits& lim) {
  Verdict v;
  const int64_t limit_kb = int64_t(lim.memory_mb) * 1024;
  if (!r.sandbox_error.empty()) {
    v.outcome = Outcome::sandbox_error;
    v.detail = r.sandbox_error;
    return v;
  }
  if (r.exec_errno != 0) {
    v.outcome = Outcome::sandbox_error;
    v.detail = std::string("cannot execute the program: ") + std::strerror(r.exec_errno);
    return v;
  }
  switch (r.stop) {
    case StopReason::output:
      v.outcome = Outcome::output_limit;
      v.detail = "stdout exceeded " + std::to_string(lim.stdout_bytes) + " bytes";
      return v;
    case StopReason::wall:
      v.outcome = Outcome::timeout;
      v.detail = "wall time limit of " + std::to_string(lim.wall_ms) + " ms exceeded";
      return v;
    case StopReason::cpu:
      v.outcome = Outcome::timeout;
      v.detail = "CPU time limit of " + std::to_string(lim.cpu_ms) + " ms exceeded";
      return v;
    case StopReason::memory:
      v.outcome = Outcome::memory_limit;
      v.detail =
          "resident memory of the program's processes exceeded " + std::to_string(lim.memory_mb) + " MiB";
      return v;
    case StopReason::none:
      break;
  }
  const bool failed = r.signal != 0 || r.exit_code != 0;
  if (r.signal == SIGSYS) {
    v.outcome = Outcome::policy_violation;
    v.detail = "killed by seccomp: a system call outside the sandbox policy";
  } else if (r.signal == SIGXCPU) {
    v.outcome = Outcome::timeout;
    v.detail = "CPU time limit of " + std::to_string(lim.cpu_ms) + " ms exceeded (SIGXCPU)";
  } else if (std::max(r.max_rss_kb, r.tree_peak_kb) > limit_kb ||
             (failed &&
              (contains(r.stderr_data, "MemoryError") || contains(r.stderr_data, "std::bad_alloc") ||
               contains(r.stderr_data, "Cannot allocate memory") ||
               contains(r.stderr_data, "memory exhausted")))) {
    v.outcome = Outcome::memory_limit;
    v.detail =
        std::max(r.max_rss_kb, r.tree_peak_kb) > limit_kb
            ? "peak resident memory over the limit of " + std::to_string(lim.memory_mb) + " MiB"
            : "an allocation was refused by the memory limit of " + std::to_string(lim.memory_mb) + " MiB";
  } else if (r.signal == SIGXFSZ || (failed && contains(r.stderr_data, "File too large"))) {
    v.outcome = Outcome::output_limit;
    v.detail = "file size limit of " + std::to_string(lim.file_size_mb) + " MiB exceeded";
  } else if (r.signal != 0) {
    v.outcome = Outcome::runtime_error;
    v.detail = "killed by signal " + signal_text(r.signal);
  } else if (r.exit_code != 0) {
    v.outcome = Outcome::runtime_error;
    v.detail = "exited with code " + std::to_string(r.exit_code);
  } else {
    v.outcome = Outcome::ok;
  }
  return v;
}

}  // namespace

Verdict classify(ExecResult&& r, const Limits& lim, Phase phase) {
  Verdict v = classify_run(r, lim);
  v.exit_code = r.exit_code;
  v.signal = r.signal;
  v.wall_ms = r.wall_ms;
  v.cpu_ms = r.cpu_ms;
  v.peak_memory_kb = std::max(r.max_rss_kb, r.tree_peak_kb);
  v.stdout_data = std::move(r.stdout_data);
  v.stderr_data = std::move(r.stderr_data);
  v.stdout_truncated = r.stdout_truncated;
  v.stderr_truncated = r.stderr_truncated;
  v.fallbacks = std::move(r.fallbacks);
  if (phase == Phase::compile && v.outcome != Outcome::ok && v.outcome != Outcome::sandbox_error) {
    if (v.outcome == Outcome::policy_violation) {
      v.outcome = Outcome::sandbox_error;
      v.detail = "the compiler was " + v.detail;
    } else {
      v.detail = "compiler: " +
                 (v.outcome == Outcome::runtime_error && r.signal == 0
                      ? std::string("rejected the program (exit code ") + std::to_string(r.exit_code) + ")"
                      : v.detail);
      v.outcome = Outcome::compile_error;
    }
  }
  return v;
}

}  // namespace rlwb::sandbox
