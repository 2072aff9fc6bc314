#include "rewards/modules/code_reward.h"

#include "rewards/modules/reward_config.h"
#include "rewards/modules/sandbox_connection.h"
#include "rewards/modules/score_columns.h"
#include "sandbox/language.h"
#include "sandbox/limits.h"
#include "sandbox/sandbox_error.h"

#include <map>
#include <optional>
#include <stdexcept>
#include <tuple>

namespace rlwb::rewards {
namespace {

using sandbox::JudgeRequest;
using sandbox::JudgeResult;
using sandbox::TestCase;

constexpr size_t kStderrHead = 400;  // bytes of the failing test's stderr kept in the details

enum class Extract { automatic, fenced, raw };

struct CodeSettings {
  sandbox::Language language = sandbox::Language::python3;
  sandbox::JudgeOptions judge;
  Extract extract = Extract::automatic;
  SandboxConnectionOptions connection;
};

struct ResponseProgram {
  std::string code;
  bool fenced = false;  // from a ``` block: it starts on a line of its own
};

// The program in a response: the body of its last complete ``` block (the
// info string such as "python" dropped), else -- unless only fenced code
// counts -- the whole text. nullopt: no program.
std::optional<ResponseProgram> extract_program(const std::string& text, Extract how) {
  if (how == Extract::raw) return ResponseProgram{text};
  std::vector<size_t> fences;
  for (size_t at = text.find("```"); at != std::string::npos; at = text.find("```", at + 3))
    fences.push_back(at);
  if (fences.size() >= 2) {
    size_t pairs = fences.size() / 2;
    size_t open = fences[2 * pairs - 2] + 3, close = fences[2 * pairs - 1];
    size_t body = text.find('\n', open);
    if (body == std::string::npos || body > close)
      body = close;  // ```code``` on one line: no info string
    else
      ++body;
    return ResponseProgram{text.substr(body, close - body), true};
  }
  if (how == Extract::fenced) return std::nullopt;
  return ResponseProgram{text};
}

// The program run: the row's prefix (HumanEval: the prompt with the
// signature and docstring) and then the response's code. Unfenced text
// continues the prefix as written (a completion may finish its last line);
// a fenced block starts on a new line. A whole function in the block
// redefines the prefix's, whose docstring alone is a valid body, and the
// prefix's imports and helpers stay defined.
std::string prefixed_program(const std::string& prefix, const ResponseProgram& program) {
  if (prefix.empty()) return program.code;
  const bool new_line = program.fenced && prefix.back() != '\n';
  return prefix + (new_line ? "\n" : "") + program.code;
}

std::string string_field(const nlohmann::json& test, const char* key, const std::string& where) {
  const auto& v = test.at(key);
  if (!v.is_string()) throw std::invalid_argument(where + "." + key + " must be a string, got " + v.dump());
  return v.get<std::string>();
}

// One row's test cases, in any of the forms docs/rewards.md lists.
std::vector<TestCase> parse_test_cases(const nlohmann::json& value) {
  if (value.is_string()) {
    auto parsed = nlohmann::json::parse(value.get<std::string>(), nullptr, false);
    if (parsed.is_discarded() || parsed.is_string())
      throw std::invalid_argument("is a string that is not JSON test cases");
    return parse_test_cases(parsed);
  }
  std::vector<TestCase> tests;
  if (value.is_object() && value.contains("inputs") && value.contains("outputs")) {
    const auto &in = value["inputs"], &out = value["outputs"];
    if (!in.is_array() || !out.is_array() || in.size() != out.size())
      throw std::invalid_argument("'inputs' and 'outputs' must be lists of strings of the same length");
    for (size_t k = 0; k < in.size(); ++k) {
      if (!in[k].is_string() || !out[k].is_string())
        throw std::invalid_argument("inputs[" + std::to_string(k) + "] and outputs[" + std::to_string(k) +
                                    "] must be strings");
      tests.push_back(TestCase::io(in[k].get<std::string>(), out[k].get<std::string>()));
    }
  } else if (value.is_array()) {
    for (size_t k = 0; k < value.size(); ++k) {
      const auto& t = value[k];
      std::string where = "test " + std::to_string(k);
      if (!t.is_object()) throw std::invalid_argument(where + " is not an object: " + t.dump());
      for (const auto& [key, v] : t.items())
        if (key != "stdin" && key != "expected" && key != "assert")
          throw std::invalid_argument(where + " has an unknown key '" + key + "'");
      if (t.contains("assert")) {
        if (t.contains("stdin") || t.contains("expected"))
          throw std::invalid_argument(where + ": an assert test has no stdin or expected");
        tests.push_back(TestCase::assertion(string_field(t, "assert", where)));
        if (tests.back().assert_code.empty()) throw std::invalid_argument(where + " has empty assert code");
      } else if (t.contains("expected")) {
        tests.push_back(TestCase::io(t.contains("stdin") ? string_field(t, "stdin", where) : "",
                                     string_field(t, "expected", where)));
      } else {
        throw std::invalid_argument(where + " has neither 'expected' nor 'assert'");
      }
    }
  } else {
    throw std::invalid_argument("is neither a list of tests nor {inputs, outputs}: " +
                                value.dump().substr(0, 200));
  }
  if (tests.empty()) throw std::invalid_argument("has no test cases");
  return tests;
}

// Text from a program (stderr, the judge's detail) as valid UTF-8 for JSON.
std::string printable(const std::string& bytes, size_t max = std::string::npos) {
  std::string head = bytes.substr(0, max);
  return nlohmann::json::parse(
             nlohmann::json(head).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
      .get<std::string>();
}

nlohmann::json row_details(const JudgeResult& r) {
  nlohmann::json d = {{"verdict", sandbox::outcome_name(r.outcome)},
                      {"score", r.score},
                      {"passed", r.passed},
                      {"total", r.total},
                      {"failing_test", r.first_failure >= 0 ? nlohmann::json(r.first_failure) : nullptr},
                      {"detail", printable(r.detail)}};
  std::string stderr_data;
  if (r.outcome == sandbox::Outcome::compile_error && r.compile)
    stderr_data = r.compile->stderr_data;
  else if (r.first_failure >= 0 && r.first_failure < static_cast<int>(r.tests.size()))
    stderr_data = r.tests[r.first_failure].stderr_data;
  d["stderr"] = printable(stderr_data, kStderrHead);
  return d;
}

class CodeReward : public core::RewardModule {
 public:
  CodeReward(std::string name, CodeSettings settings)
      : name_(std::move(name)),
        s_(std::move(settings)),
        sandbox_(s_.connection, "code reward '" + name_ + "'") {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "code");
    const std::string module = "code reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    auto responses = text_port(input, ctx, "response_text", module);
    const auto& test_values = object_port(input, ctx, "tests", module);
    std::vector<std::string> prefixes;
    if (input.has("program_prefix")) prefixes = text_port(input, ctx, "program_prefix", module);

    const size_t rows = responses.size();
    std::vector<double> scores(rows, 0.0);
    std::vector<nlohmann::json> details(rows);
    // Rows with the same program and tests (GRPO samples often agree) are
    // judged once; every row gets that result.
    std::vector<JudgeRequest> requests;
    std::vector<std::vector<size_t>> request_rows;
    std::map<std::string, size_t> request_of;
    for (size_t i = 0; i < rows; ++i) {
      JudgeRequest req;
      try {
        req.tests = parse_test_cases(test_values[i]);
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): row " + std::to_string(i) +
                                 " of input port 'tests' " + e.what() +
                                 "; write [{\"stdin\": ..., \"expected\": ...} or {\"assert\": ...}, ...] or "
                                 "{\"inputs\": [...], \"outputs\": [...]} (docs/rewards.md)");
      }
      auto program = extract_program(responses[i], s_.extract);
      if (!program) {
        details[i] = {{"verdict", "no_code"}, {"score", 0.0},
                      {"passed", 0},          {"total", req.tests.size()},
                      {"failing_test", 0},    {"detail", "no ``` code block in the response"},
                      {"stderr", ""}};
        continue;
      }
      std::string code = prefixed_program(prefixes.empty() ? "" : prefixes[i], *program);
      std::string key = code + '\0' + test_values[i].dump();
      auto [it, fresh] = request_of.emplace(std::move(key), requests.size());
      if (fresh) {
        req.language = s_.language;
        req.program = std::move(code);
        req.options = s_.judge;
        requests.push_back(std::move(req));
        request_rows.emplace_back();
      }
      request_rows[it->second].push_back(i);
    }

    std::vector<JudgeResult> results;
    try {
      results = sandbox_.judge_all(requests);
    } catch (const sandbox::SandboxError& e) {
      throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): " + e.what());
    }
    std::map<std::string, int> verdicts;
    size_t sandbox_errors = 0;
    for (size_t k = 0; k < results.size(); ++k) {
      for (size_t i : request_rows[k]) {
        scores[i] = results[k].score;
        details[i] = row_details(results[k]);
      }
      if (results[k].outcome == sandbox::Outcome::sandbox_error) ++sandbox_errors;
    }
    // Every program's fate unknown: the sandbox is broken, not the programs.
    if (!results.empty() && sandbox_errors == results.size())
      throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): the sandbox failed on all " +
                               std::to_string(results.size()) + " programs; first: " + results[0].detail);
    for (const auto& d : details) ++verdicts[d["verdict"].get<std::string>()];
    const size_t judged = results.size();

    core::Batch out = score_output(scores, std::move(details), mask, ctx);
    auto& metrics = out.meta()["metrics"];
    for (const auto& [verdict, count] : verdicts)
      metrics["reward/" + ctx.node + "/verdict/" + verdict] = rows ? static_cast<double>(count) / rows : 0.0;
    metrics["reward/" + ctx.node + "/programs_run"] = static_cast<double>(judged);
    return out;
  }

 private:
  std::string name_;
  CodeSettings s_;
  SandboxConnection sandbox_;
};

CodeSettings code_settings(const core::RewardSpec& spec) {
  RewardConfig config(
      spec, {"language", "scoring", "comparison", "stop_at_first_failure", "extract", "limits",
             "compile_limits", "address", "sandbox_binary", "executors", "timeout_s", "startup_timeout_s"});
  CodeSettings s;
  try {
    s.language = sandbox::parse_language(config.text("language", "python3"));
  } catch (const sandbox::SandboxError& e) {
    config.fail("language", e.what());
  }
  s.judge.scoring =
      sandbox::parse_scoring(config.choice("scoring", "pass_rate", {"pass_rate", "all_or_nothing"}));
  s.judge.comparison =
      sandbox::parse_comparison(config.choice("comparison", "lines", {"lines", "tokens", "exact"}));
  if (config.has("stop_at_first_failure"))
    s.judge.stop_at_first_failure = config.flag("stop_at_first_failure", false);
  std::string extract = config.choice("extract", "auto", {"auto", "fenced", "raw"});
  s.extract = extract == "fenced" ? Extract::fenced : extract == "raw" ? Extract::raw : Extract::automatic;
  for (auto [key, limits, base] :
       {std::tuple{"limits", &s.judge.limits, sandbox::default_run_limits()},
        std::tuple{"compile_limits", &s.judge.compile_limits, sandbox::default_compile_limits()}}) {
    if (!config.has(key)) continue;
    std::string where = config.where(key);
    try {
      *limits = sandbox::limits_from_json(config.raw(key), base, where.c_str());
      sandbox::validate_limits(*limits, where.c_str());
    } catch (const sandbox::SandboxError& e) {
      throw std::runtime_error(std::string(e.what()) +
                               " (keys and ranges: sandbox/limits.h, docs/sandbox.md)");
    }
  }
  s.connection.address = config.text("address", "");
  s.connection.binary = config.text("sandbox_binary", "");
  if (!s.connection.address.empty() && (config.has("sandbox_binary") || config.has("executors")))
    config.fail("address",
                "connects to a running service, so sandbox_binary and executors (settings for a "
                "service the reward starts) do not apply; give one or the other");
  s.connection.executors = static_cast<int>(config.number_in("executors", 0, 0, 1024));
  s.connection.call_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(1000 * config.number_in("timeout_s", 300, 1, 86400)));
  s.connection.startup_timeout = std::chrono::milliseconds(
      static_cast<int64_t>(1000 * config.number_in("startup_timeout_s", 30, 1, 600)));
  return s;
}

}  // namespace

core::RewardType code_reward_type() {
  core::RewardType type;
  type.description = "code: runs the response as a program in the sandbox against the row's test cases";
  type.methods =
      score_method({core::required_port("tests", "the test cases per row (docs/rewards.md)"),
                    core::optional_port("program_prefix",
                                        "code run before each response's program (HumanEval: the prompt)")});
  type.create = [](const core::RewardSpec& spec, const core::Experiment&, const core::RewardTypes&) {
    return std::unique_ptr<core::RewardModule>(std::make_unique<CodeReward>(spec.name, code_settings(spec)));
  };
  // The settings alone: creating the reward starts its sandbox service.
  type.check = [](const core::RewardSpec& spec, const core::Experiment&) { code_settings(spec); };
  return type;
}

}  // namespace rlwb::rewards
