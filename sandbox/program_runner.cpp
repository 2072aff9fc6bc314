#include "sandbox/program_runner.h"

#include <sys/random.h>

#include <algorithm>
#include <cstdio>

#include "sandbox/classify.h"
#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {
namespace {

constexpr size_t kMaxProgramBytes = 16u << 20;
constexpr size_t kMaxStdinBytes = 256u << 20;

// A program ready to run: its command and files, or why it is not.
struct Built {
  std::vector<std::string> argv;
  std::vector<ExecFile> files;
  std::optional<Verdict> compile;  // the compile step's verdict (C, C++)
  bool ok = true;
};

Built build(const ExecFn& exec, Language lang, const std::string& source, const Limits& compile_limits) {
  const LanguageSpec& spec = language_spec(lang);
  Built b;
  if (!is_compiled(lang)) {
    b.argv = spec.run_argv;
    b.files = {{spec.source_file, source, false}};
    return b;
  }
  ExecJob job;
  job.argv = spec.compile_argv;
  job.files = {{spec.source_file, source, false}};
  job.limits = compile_limits;
  job.collect = spec.binary_file;
  ExecResult r = exec(job);
  const bool has_binary = r.has_artifact;
  std::string binary = std::move(r.artifact);
  Verdict v = classify(std::move(r), compile_limits, Phase::compile);
  if (v.ok() && !has_binary) {
    v.outcome = Outcome::sandbox_error;
    v.detail = "the compiler reported success but left no binary";
  }
  b.ok = v.ok();
  b.compile = std::move(v);
  if (b.ok) {
    b.argv = spec.run_argv;
    b.files = {{spec.binary_file, std::move(binary), true}};
  }
  return b;
}

Verdict run_built(const ExecFn& exec, const Built& b, const std::string& stdin_data, const Limits& limits) {
  ExecJob job;
  job.argv = b.argv;
  job.files = b.files;
  job.stdin_data = stdin_data;
  job.limits = limits;
  job.python_main = b.argv == language_spec(Language::python3).run_argv;
  return classify(exec(job), limits, Phase::run);
}

std::string random_marker() {
  unsigned char bytes[16];
  if (::getrandom(bytes, sizeof bytes, 0) != static_cast<ssize_t>(sizeof bytes))
    throw SandboxError("getrandom failed");
  std::string hex = "RLWB-TESTS-DONE-";
  char two[3];
  for (unsigned char c : bytes) {
    std::snprintf(two, sizeof two, "%02x", c);
    hex += two;
  }
  return hex;
}

// The program with the test code appended and the completion marker last.
std::string assert_harness(Language lang, const std::string& program, const std::string& test,
                           const std::string& marker) {
  switch (lang) {
    case Language::python3:
      return program + "\n\n" + test + "\n\nimport sys as _rlwb_sys\n_rlwb_sys.stdout.write('\\n" + marker +
             "\\n')\n_rlwb_sys.stdout.flush()\n";
    case Language::bash:
      return program + "\n" + test + "\nprintf '\\n%s\\n' '" + marker + "'\n";
    case Language::c:
    case Language::cpp:
      return "#include <stdio.h>\n#include <assert.h>\n#line 1 \"main\"\n" + program +
             "\n#line 1 \"test\"\nstatic void rlwb_run_tests(void) {\n" + test +
             "\n}\nint main(void) {\n  rlwb_run_tests();\n  fflush(stdout);\n  fputs(\"\\n" + marker +
             "\\n\", stdout);\n  fflush(stdout);\n  return 0;\n}\n";
  }
  return program;
}

void judge_assert_run(Verdict& v, const std::string& marker) {
  if (v.ok()) {
    std::string tail = "\n" + marker + "\n";
    if (v.stdout_data.size() >= tail.size() &&
        v.stdout_data.compare(v.stdout_data.size() - tail.size(), tail.size(), tail) == 0) {
      v.stdout_data.resize(v.stdout_data.size() - tail.size());
    } else {
      v.outcome = Outcome::wrong_answer;
      v.detail = "the program ended before its tests completed (no completion marker)";
    }
  } else if (v.outcome == Outcome::runtime_error &&
             (v.stderr_data.find("AssertionError") != std::string::npos ||
              v.stderr_data.find("Assertion `") != std::string::npos)) {
    v.outcome = Outcome::wrong_answer;
    v.detail = "a test assertion failed";
  }
}

std::vector<std::string_view> split_lines(std::string_view s) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= s.size()) {
    size_t nl = s.find('\n', start);
    if (nl == std::string_view::npos) nl = s.size();
    std::string_view line = s.substr(start, nl - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.remove_suffix(1);
    lines.push_back(line);
    start = nl + 1;
  }
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

std::vector<std::string_view> split_tokens(std::string_view s) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
  };
  while (i < s.size()) {
    while (i < s.size() && space(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !space(s[j])) ++j;
    if (j > i) tokens.push_back(s.substr(i, j - i));
    i = j;
  }
  return tokens;
}

std::string excerpt(std::string_view s) {
  std::string e(s.substr(0, 60));
  if (s.size() > 60) e += "...";
  return "'" + e + "'";
}

}  // namespace

bool outputs_match(std::string_view actual, std::string_view expected, Comparison how, std::string* why) {
  if (how == Comparison::exact) {
    if (actual == expected) return true;
    if (why) {
      size_t i = 0;
      while (i < actual.size() && i < expected.size() && actual[i] == expected[i]) ++i;
      *why = "outputs differ at byte " + std::to_string(i) + " (expected " + std::to_string(expected.size()) +
             " bytes, got " + std::to_string(actual.size()) + ")";
    }
    return false;
  }
  const bool by_line = how == Comparison::lines;
  auto a = by_line ? split_lines(actual) : split_tokens(actual);
  auto e = by_line ? split_lines(expected) : split_tokens(expected);
  const char* unit = by_line ? "line" : "token";
  for (size_t i = 0; i < std::min(a.size(), e.size()); ++i)
    if (a[i] != e[i]) {
      if (why)
        *why = std::string(unit) + " " + std::to_string(i + 1) + ": expected " + excerpt(e[i]) + ", got " +
               excerpt(a[i]);
      return false;
    }
  if (a.size() != e.size()) {
    if (why)
      *why = "expected " + std::to_string(e.size()) + " " + unit + "s, got " + std::to_string(a.size());
    return false;
  }
  return true;
}

void validate(const RunRequest& r) {
  if (r.program.size() > kMaxProgramBytes) throw SandboxError("program is larger than 16 MiB");
  if (r.stdin_data.size() > kMaxStdinBytes) throw SandboxError("stdin is larger than 256 MiB");
  validate_limits(r.limits, "limits");
  validate_limits(r.compile_limits, "compile_limits");
}

void validate(const JudgeRequest& r) {
  if (r.program.size() > kMaxProgramBytes) throw SandboxError("program is larger than 16 MiB");
  if (r.tests.empty()) throw SandboxError("no test cases: a judge request needs at least one");
  for (size_t i = 0; i < r.tests.size(); ++i)
    if (r.tests[i].stdin_data.size() > kMaxStdinBytes || r.tests[i].assert_code.size() > kMaxProgramBytes)
      throw SandboxError("test " + std::to_string(i) + " is too large");
  validate_limits(r.options.limits, "options.limits");
  validate_limits(r.options.compile_limits, "options.compile_limits");
}

Verdict run_with(const ExecFn& exec, const RunRequest& request) {
  validate(request);
  Built b = build(exec, request.language, request.program, request.compile_limits);
  if (!b.ok) return std::move(*b.compile);
  return run_built(exec, b, request.stdin_data, request.limits);
}

JudgeResult judge_with(const ExecFn& exec, const JudgeRequest& request) {
  validate(request);
  const JudgeOptions& opt = request.options;
  const bool stop_early = opt.stop_at_first_failure.value_or(opt.scoring == Scoring::all_or_nothing);
  JudgeResult res;
  res.total = static_cast<int>(request.tests.size());
  std::optional<Built> io_program;  // compiled once for every I/O test
  bool sandbox_failed = false;
  for (size_t i = 0; i < request.tests.size(); ++i) {
    const TestCase& t = request.tests[i];
    Verdict v;
    bool compile_failed = false;
    if (t.is_assert()) {
      const std::string marker = random_marker();
      Built b =
          build(exec, request.language,
                assert_harness(request.language, request.program, t.assert_code, marker), opt.compile_limits);
      if (!b.ok) {
        v = std::move(*b.compile);
        compile_failed = true;
      } else {
        v = run_built(exec, b, "", opt.limits);
        judge_assert_run(v, marker);
      }
    } else {
      if (!io_program) {
        io_program = build(exec, request.language, request.program, opt.compile_limits);
        res.compile = io_program->compile;
      }
      if (!io_program->ok) {
        v = *io_program->compile;
        compile_failed = true;
      } else {
        v = run_built(exec, *io_program, t.stdin_data, opt.limits);
        std::string why;
        if (v.ok() && !outputs_match(v.stdout_data, t.expected_stdout, opt.comparison, &why)) {
          v.outcome = Outcome::wrong_answer;
          v.detail = why;
        }
      }
    }
    if (v.ok()) {
      ++res.passed;
    } else if (res.first_failure < 0) {
      res.first_failure = static_cast<int>(i);
      res.outcome = v.outcome;
      res.detail = "test " + std::to_string(i) + ": " + outcome_name(v.outcome) +
                   (v.detail.empty() ? "" : " (" + v.detail + ")");
    }
    sandbox_failed |= v.outcome == Outcome::sandbox_error;
    res.tests.push_back(std::move(v));
    if (res.first_failure >= 0 && (stop_early || compile_failed || sandbox_failed)) break;
  }
  if (res.passed == res.total) {
    res.outcome = Outcome::ok;
    res.detail = "all " + std::to_string(res.total) + " tests passed";
  } else if (sandbox_failed) {
    res.outcome = Outcome::sandbox_error;
  }
  res.score = opt.scoring == Scoring::pass_rate ? static_cast<double>(res.passed) / res.total
                                                : (res.passed == res.total ? 1.0 : 0.0);
  return res;
}

const char* comparison_name(Comparison c) {
  switch (c) {
    case Comparison::exact:
      return "exact";
    case Comparison::lines:
      return "lines";
    case Comparison::tokens:
      return "tokens";
  }
  return "lines";
}

Comparison parse_comparison(const std::string& name) {
  for (Comparison c : {Comparison::exact, Comparison::lines, Comparison::tokens})
    if (name == comparison_name(c)) return c;
  throw SandboxError("unknown comparison '" + name + "': use exact, lines or tokens");
}

const char* scoring_name(Scoring s) { return s == Scoring::pass_rate ? "pass_rate" : "all_or_nothing"; }

Scoring parse_scoring(const std::string& name) {
  for (Scoring s : {Scoring::pass_rate, Scoring::all_or_nothing})
    if (name == scoring_name(s)) return s;
  throw SandboxError("unknown scoring '" + name + "': use pass_rate or all_or_nothing");
}

}  // namespace rlwb::sandbox
