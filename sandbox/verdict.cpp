#include "sandbox/verdict.h"

#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {
namespace {

constexpr const char* kNames[] = {"ok",           "wrong_answer", "runtime_error",    "timeout",
                                  "memory_limit", "output_limit", "policy_violation", "compile_error",
                                  "sandbox_error"};

// JSON strings must be UTF-8; program output need not be.
nlohmann::json text(const std::string& s) {
  return nlohmann::json::parse(
      nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

const char* outcome_name(Outcome o) { return kNames[static_cast<int>(o)]; }

std::optional<Outcome> parse_outcome(std::string_view name) {
  for (int i = 0; i < static_cast<int>(std::size(kNames)); ++i)
    if (name == kNames[i]) return static_cast<Outcome>(i);
  return std::nullopt;
}

nlohmann::json verdict_to_json(const Verdict& v, bool with_output) {
  nlohmann::json j = {
      {"verdict", outcome_name(v.outcome)},
      {"detail", text(v.detail)},
      {"exit_code", v.exit_code},
      {"signal", v.signal},
      {"wall_ms", v.wall_ms},
      {"cpu_ms", v.cpu_ms},
      {"peak_memory_kb", v.peak_memory_kb},
      {"stdout_truncated", v.stdout_truncated},
      {"stderr_truncated", v.stderr_truncated},
      {"fallbacks", v.fallbacks},
  };
  if (with_output) {
    j["stdout"] = text(v.stdout_data);
    j["stderr"] = text(v.stderr_data);
  }
  return j;
}

Verdict verdict_from_json(const nlohmann::json& j) {
  try {
    Verdict v;
    auto o = parse_outcome(j.at("verdict").get<std::string>());
    if (!o) throw SandboxError("unknown verdict '" + j.at("verdict").get<std::string>() + "'");
    v.outcome = *o;
    v.detail = j.value("detail", "");
    v.exit_code = j.value("exit_code", -1);
    v.signal = j.value("signal", 0);
    v.wall_ms = j.value("wall_ms", 0.0);
    v.cpu_ms = j.value("cpu_ms", 0.0);
    v.peak_memory_kb = j.value("peak_memory_kb", int64_t(0));
    v.stdout_truncated = j.value("stdout_truncated", false);
    v.stderr_truncated = j.value("stderr_truncated", false);
    v.stdout_data = j.value("stdout", "");
    v.stderr_data = j.value("stderr", "");
    if (j.contains("fallbacks")) v.fallbacks = j.at("fallbacks").get<std::vector<std::string>>();
    return v;
  } catch (const nlohmann::json::exception& e) {
    throw SandboxError(std::string("malformed verdict: ") + e.what());
  }
}

std::string describe(const Verdict& v) {
  char line[256];
  std::string out = std::string("verdict: ") + outcome_name(v.outcome);
  if (!v.detail.empty()) out += " (" + v.detail + ")";
  out += "\n";
  std::snprintf(line, sizeof line,
                "exit code: %d  signal: %d%s%s  wall: %.1f ms  cpu: %.1f ms  peak memory: %.1f MiB\n",
                v.exit_code, v.signal, v.signal ? " " : "", v.signal ? strsignal(v.signal) : "", v.wall_ms,
                v.cpu_ms, v.peak_memory_kb / 1024.0);
  out += line;
  for (const auto& f : v.fallbacks) out += "fallback: " + f + "\n";
  out += "--- stdout" + std::string(v.stdout_truncated ? " (truncated)" : "") + " ---\n" + v.stdout_data;
  if (!v.stdout_data.empty() && v.stdout_data.back() != '\n') out += "\n";
  out += "--- stderr" + std::string(v.stderr_truncated ? " (truncated)" : "") + " ---\n" + v.stderr_data;
  if (!v.stderr_data.empty() && v.stderr_data.back() != '\n') out += "\n";
  return out;
}

}  // namespace rlwb::sandbox
