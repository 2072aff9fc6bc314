// What a caller asks of the sandbox, as plain structs with documented
// defaults: run one program (RunRequest), or judge one program against test
// cases (JudgeRequest -> JudgeResult). Shared by the local sandbox, the
// service protocol and its client, and the code reward.
//
// Judging is by output, never by exit code alone:
//   - an I/O test passes when the program exits 0 and its stdout matches
//     the expected output under the chosen comparison;
//   - an assert test appends the test code to the program (for C/C++ the
//     code is the body of the main() the sandbox adds: the program defines
//     functions, not main) and then prints a random completion marker; it
//     passes only when the program exits 0 *and* the marker is the last line
//     of stdout, so a program that exits early (exit(0), os._exit(0)) fails.
//     (Code in the same process could forge the marker by reading its own
//     source: use I/O tests where programs are adversarial.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sandbox/language.h"
#include "sandbox/limits.h"
#include "sandbox/verdict.h"

namespace rlwb::sandbox {

struct RunRequest {
  Language language = Language::python3;
  std::string program;  // source code
  std::string stdin_data;
  Limits limits = default_run_limits();
  Limits compile_limits = default_compile_limits();  // C and C++ only
};

struct TestCase {
  std::string stdin_data;
  std::string expected_stdout;
  std::string assert_code;  // non-empty: an assert test (stdin/expected unused)

  static TestCase io(std::string stdin_data, std::string expected_stdout) {
    return {std::move(stdin_data), std::move(expected_stdout), {}};
  }
  static TestCase assertion(std::string code) { return {{}, {}, std::move(code)}; }
  bool is_assert() const { return !assert_code.empty(); }
};

enum class Comparison {
  exact,   // byte for byte
  lines,   // ignore trailing whitespace on each line and trailing empty lines (default)
  tokens,  // any run of whitespace equals any other (whitespace-insensitive)
};
enum class Scoring {
  pass_rate,       // passed / total
  all_or_nothing,  // 1 when every test passes, else 0
};

struct JudgeOptions {
  Comparison comparison = Comparison::lines;
  Scoring scoring = Scoring::pass_rate;
  // Stop at the first failing test (the rest count as failed). Defaults to
  // true for all_or_nothing, where later tests cannot change the score.
  std::optional<bool> stop_at_first_failure;
  Limits limits = default_run_limits();              // per test
  Limits compile_limits = default_compile_limits();  // per compilation
};

struct JudgeRequest {
  Language language = Language::python3;
  std::string program;
  std::vector<TestCase> tests;
  JudgeOptions options;
};

struct JudgeResult {
  double score = 0;
  int passed = 0;
  int total = 0;
  // ok when every test passed; compile_error; or the first failing test's
  // outcome (wrong_answer, timeout, ...); sandbox_error if the sandbox failed.
  Outcome outcome = Outcome::sandbox_error;
  std::string detail;              // e.g. "test 3: wrong_answer (line 2: expected '5', got '4')"
  int first_failure = -1;          // index of the first failing test, -1 if none
  std::optional<Verdict> compile;  // the compile step (C, C++ I/O tests)
  std::vector<Verdict> tests;      // per test that ran, in order
};

const char* comparison_name(Comparison c);
Comparison parse_comparison(const std::string& name);  // throws SandboxError
const char* scoring_name(Scoring s);
Scoring parse_scoring(const std::string& name);  // throws SandboxError

}  // namespace rlwb::sandbox
