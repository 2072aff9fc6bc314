// The verdict of one execution: what happened to the program (outcome) and
// the evidence (exit code, signal, capped stdout/stderr, wall and CPU time,
// peak memory), plus the isolation features that had to be substituted on
// this kernel (fallbacks; e.g. no cgroup v2). Produced by the executor
// (classify.h), carried by the service protocol, read by the code reward.
#pragma once

#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::sandbox {

enum class Outcome {
  ok,                // ran to the end (exit 0) and, when judged, its output matched
  wrong_answer,      // ran to the end but its output did not match (judging only)
  runtime_error,     // non-zero exit or killed by a signal not listed below
  timeout,           // wall-clock or CPU limit
  memory_limit,      // memory limit (resident memory, or allocation refused by the limit)
  output_limit,      // stdout cap, or a file larger than the file size limit
  policy_violation,  // a system call outside the allowlist (killed by seccomp)
  compile_error,     // the compiler rejected the program (or ran out of its limits)
  sandbox_error,     // the sandbox itself failed; the program's fate is unknown
};

const char* outcome_name(Outcome o);  // "ok", "wrong_answer", ...
std::optional<Outcome> parse_outcome(std::string_view name);

struct Verdict {
  Outcome outcome = Outcome::sandbox_error;
  std::string detail;       // one line saying why, e.g. "wall time limit of 2000 ms exceeded"
  int exit_code = -1;       // exit status when the program exited, else -1
  int signal = 0;           // signal that killed the program, else 0
  std::string stdout_data;  // capped at Limits::stdout_bytes
  std::string stderr_data;  // capped at Limits::stderr_bytes
  bool stdout_truncated = false;
  bool stderr_truncated = false;
  double wall_ms = 0;                  // from start to the end of the main process
  double cpu_ms = 0;                   // user + system time of all the program's processes
  int64_t peak_memory_kb = 0;          // largest resident set seen (one process, or the sum sampled)
  std::vector<std::string> fallbacks;  // isolation features substituted on this kernel

  bool ok() const { return outcome == Outcome::ok; }
};

// Output bytes that are not UTF-8 are replaced (U+FFFD) in JSON; the
// service sends raw stdout/stderr in frames of their own (protocol.h).
nlohmann::json verdict_to_json(const Verdict& v, bool with_output = true);
Verdict verdict_from_json(const nlohmann::json& j);  // throws SandboxError

// A short human-readable rendering (the CLI's default output).
std::string describe(const Verdict& v);

}  // namespace rlwb::sandbox
