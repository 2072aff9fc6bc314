#include "sandbox/protocol.h"

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox::protocol {
namespace {

nlohmann::json bytes(const std::string& s, std::vector<std::string>& frames) {
  if (is_utf8(s)) return s;
  frames.push_back(s);
  return {{"frame", frames.size()}};  // frame 0 is the JSON itself
}

std::string get_bytes(const nlohmann::json& j, const char* key, const std::vector<std::string>& frames,
                      const std::string& where, bool required = false) {
  if (!j.contains(key)) {
    if (required) throw SandboxError(where + ": missing '" + key + "'");
    return {};
  }
  const auto& v = j.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("frame") && v["frame"].is_number_unsigned()) {
    size_t k = v["frame"].get<size_t>();
    if (k >= 1 && k <= frames.size()) return frames[k - 1];
    throw SandboxError(where + "." + key + " refers to frame " + std::to_string(k) +
                       ", but the request has " + std::to_string(frames.size()) + " extra frame(s)");
  }
  throw SandboxError(where + "." + key + " must be a string or {\"frame\": k}");
}

Language get_language(const nlohmann::json& j) {
  if (!j.contains("lang") || !j["lang"].is_string())
    throw SandboxError("request: missing 'lang' (python3, bash, c or cpp)");
  return parse_language(j["lang"].get<std::string>());
}

void check_keys(const nlohmann::json& j, std::initializer_list<const char*> known, const std::string& where) {
  if (!j.is_object()) throw SandboxError(where + " must be a JSON object");
  for (auto it = j.begin(); it != j.end(); ++it) {
    bool ok = false;
    for (const char* k : known) ok |= it.key() == k;
    if (!ok) {
      std::string list;
      for (const char* k : known) list += std::string(list.empty() ? "" : ", ") + k;
      throw SandboxError(where + ": unknown key '" + it.key() + "' (known: " + list + ")");
    }
  }
}

}  // namespace

bool is_utf8(const std::string& s) {
  size_t i = 0, n = s.size();
  while (i < n) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || i + len > n) return false;
    if (len == 2 && c < 0xC2) return false;
    for (int k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) >> 6) != 2) return false;
    if (len == 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if ((c == 0xE0 && c1 < 0xA0) || (c == 0xED && c1 >= 0xA0)) return false;
    }
    if (len == 4) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      if (c > 0xF4 || (c == 0xF0 && c1 < 0x90) || (c == 0xF4 && c1 >= 0x90)) return false;
    }
    i += static_cast<size_t>(len);
  }
  return true;
}

nlohmann::json run_to_json(const RunRequest& r, std::vector<std::string>& frames) {
  return {{"kind", "run"},
          {"lang", language_name(r.language)},
          {"program", bytes(r.program, frames)},
          {"stdin", bytes(r.stdin_data, frames)},
          {"limits", limits_to_json(r.limits)},
          {"compile_limits", limits_to_json(r.compile_limits)}};
}

RunRequest run_from_json(const nlohmann::json& j, const std::vector<std::string>& frames) {
  check_keys(j, {"id", "kind", "lang", "program", "stdin", "limits", "compile_limits"}, "run request");
  RunRequest r;
  r.language = get_language(j);
  r.program = get_bytes(j, "program", frames, "run request", true);
  r.stdin_data = get_bytes(j, "stdin", frames, "run request");
  if (j.contains("limits")) r.limits = limits_from_json(j["limits"], default_run_limits(), "limits");
  if (j.contains("compile_limits"))
    r.compile_limits = limits_from_json(j["compile_limits"], default_compile_limits(), "compile_limits");
  return r;
}

nlohmann::json judge_to_json(const JudgeRequest& r, std::vector<std::string>& frames) {
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& t : r.tests) {
    if (t.is_assert())
      tests.push_back({{"assert", bytes(t.assert_code, frames)}});
    else
      tests.push_back(
          {{"stdin", bytes(t.stdin_data, frames)}, {"expected", bytes(t.expected_stdout, frames)}});
  }
  nlohmann::json options = {{"comparison", comparison_name(r.options.comparison)},
                            {"scoring", scoring_name(r.options.scoring)},
                            {"limits", limits_to_json(r.options.limits)},
                            {"compile_limits", limits_to_json(r.options.compile_limits)}};
  if (r.options.stop_at_first_failure) options["stop_at_first_failure"] = *r.options.stop_at_first_failure;
  return {{"kind", "judge"},
          {"lang", language_name(r.language)},
          {"program", bytes(r.program, frames)},
          {"tests", tests},
          {"options", options}};
}

JudgeRequest judge_from_json(const nlohmann::json& j, const std::vector<std::string>& frames) {
  check_keys(j, {"id", "kind", "lang", "program", "tests", "options"}, "judge request");
  JudgeRequest r;
  r.language = get_language(j);
  r.program = get_bytes(j, "program", frames, "judge request", true);
  if (!j.contains("tests") || !j["tests"].is_array())
    throw SandboxError(
        "judge request: 'tests' must be an array of {\"stdin\", \"expected\"} or {\"assert\"}");
  for (size_t i = 0; i < j["tests"].size(); ++i) {
    const auto& t = j["tests"][i];
    std::string where = "tests[" + std::to_string(i) + "]";
    check_keys(t, {"stdin", "expected", "assert"}, where);
    if (t.contains("assert")) {
      if (t.contains("stdin") || t.contains("expected"))
        throw SandboxError(where + ": an assert test has no stdin/expected");
      r.tests.push_back(TestCase::assertion(get_bytes(t, "assert", frames, where, true)));
      if (r.tests.back().assert_code.empty()) throw SandboxError(where + ": empty assert code");
    } else {
      r.tests.push_back(
          TestCase::io(get_bytes(t, "stdin", frames, where), get_bytes(t, "expected", frames, where, true)));
    }
  }
  if (j.contains("options")) {
    const auto& o = j["options"];
    check_keys(o, {"comparison", "scoring", "stop_at_first_failure", "limits", "compile_limits"}, "options");
    try {
      if (o.contains("comparison"))
        r.options.comparison = parse_comparison(o["comparison"].get<std::string>());
      if (o.contains("scoring")) r.options.scoring = parse_scoring(o["scoring"].get<std::string>());
      if (o.contains("stop_at_first_failure"))
        r.options.stop_at_first_failure = o["stop_at_first_failure"].get<bool>();
    } catch (const nlohmann::json::exception&) {
      throw SandboxError("options: comparison and scoring must be strings, stop_at_first_failure a boolean");
    }
    if (o.contains("limits"))
      r.options.limits = limits_from_json(o["limits"], default_run_limits(), "options.limits");
    if (o.contains("compile_limits"))
      r.options.compile_limits =
          limits_from_json(o["compile_limits"], default_compile_limits(), "options.compile_limits");
  }
  return r;
}

nlohmann::json judge_result_to_json(const JudgeResult& r) {
  nlohmann::json tests = nlohmann::json::array();
  for (const auto& v : r.tests) tests.push_back(verdict_to_json(v));
  return {{"score", r.score},
          {"passed", r.passed},
          {"total", r.total},
          {"verdict", outcome_name(r.outcome)},
          {"detail", r.detail},
          {"first_failure", r.first_failure},
          {"compile", r.compile ? verdict_to_json(*r.compile) : nlohmann::json()},
          {"tests", tests}};
}

JudgeResult judge_result_from_json(const nlohmann::json& j) {
  try {
    JudgeResult r;
    r.score = j.at("score").get<double>();
    r.passed = j.at("passed").get<int>();
    r.total = j.at("total").get<int>();
    auto o = parse_outcome(j.at("verdict").get<std::string>());
    if (!o) throw SandboxError("unknown verdict in judge result");
    r.outcome = *o;
    r.detail = j.value("detail", "");
    r.first_failure = j.value("first_failure", -1);
    if (j.contains("compile") && !j["compile"].is_null()) r.compile = verdict_from_json(j["compile"]);
    for (const auto& t : j.at("tests")) r.tests.push_back(verdict_from_json(t));
    return r;
  } catch (const nlohmann::json::exception& e) {
    throw SandboxError(std::string("malformed judge result: ") + e.what());
  }
}

}  // namespace rlwb::sandbox::protocol
