// Judging: I/O tests with each comparison, assert tests, scores, compile
// once, and the rule that a verdict comes from output, never from the exit
// code alone.
#include "sandbox/program_runner.h"
#include "tests/sandbox/sandbox_test_util.h"

namespace rlwb::sandbox::testing {
namespace {

using ::testing::HasSubstr;

JudgeRequest request(Language lang, std::string program, std::vector<TestCase> tests, JudgeOptions opt = {}) {
  opt.limits = quick_limits();
  return {lang, std::move(program), std::move(tests), opt};
}

const std::vector<TestCase> kSumTests = {TestCase::io("1 2\n", "3\n"), TestCase::io("40 2\n", "42\n"),
                                         TestCase::io("-5 5\n", "0\n")};

TEST(SandboxJudgeTest, CorrectProgramPassesEveryTestInEveryLanguage) {
  const char* programs[] = {"a, b = map(int, input().split())\nprint(a + b)\n", "read a b\necho $((a + b))\n",
                            "#include <stdio.h>\nint main(void) { int a, b; scanf(\"%d %d\", &a, "
                            "&b); printf(\"%d\\n\", a + b); }\n",
                            "#include <iostream>\nint main() { int a, b; std::cin >> a >> b; "
                            "std::cout << a + b << std::endl; }\n"};
  Language langs[] = {Language::python3, Language::bash, Language::c, Language::cpp};
  for (int i = 0; i < 4; ++i) {
    JudgeResult r = shared_sandbox().judge(request(langs[i], programs[i], kSumTests));
    EXPECT_EQ(r.outcome, Outcome::ok) << language_name(langs[i]) << ": " << r.detail;
    EXPECT_EQ(r.passed, 3);
    EXPECT_DOUBLE_EQ(r.score, 1.0);
    EXPECT_EQ(r.first_failure, -1);
    EXPECT_EQ(r.tests.size(), 3u);
    EXPECT_EQ(r.compile.has_value(), is_compiled(langs[i])) << "C and C++ compile once, for all tests";
  }
}

TEST(SandboxJudgeTest, PassRateCountsPassedTests) {
  // Wrong on negative numbers only.
  JudgeResult r = shared_sandbox().judge(
      request(Language::python3, "a, b = map(int, input().split())\nprint(abs(a) + abs(b))\n", kSumTests));
  EXPECT_EQ(r.passed, 2);
  EXPECT_EQ(r.total, 3);
  EXPECT_NEAR(r.score, 2.0 / 3.0, 1e-9);
  EXPECT_EQ(r.outcome, Outcome::wrong_answer);
  EXPECT_EQ(r.first_failure, 2);
  EXPECT_THAT(r.detail, HasSubstr("test 2: wrong_answer"));
  EXPECT_THAT(r.detail, HasSubstr("expected '0', got '10'"));
}

TEST(SandboxJudgeTest, AllOrNothingStopsAtTheFirstFailure) {
  JudgeOptions opt;
  opt.scoring = Scoring::all_or_nothing;
  std::vector<TestCase> tests = {TestCase::io("1\n", "2\n"), TestCase::io("2\n", "5\n"),
                                 TestCase::io("3\n", "6\n")};
  JudgeResult r = shared_sandbox().judge(request(Language::python3, "print(int(input()) * 2)\n", tests, opt));
  EXPECT_DOUBLE_EQ(r.score, 0.0);
  EXPECT_EQ(r.passed, 1);
  EXPECT_EQ(r.tests.size(), 2u) << "the third test cannot change the score";
  opt.stop_at_first_failure = false;
  JudgeResult all =
      shared_sandbox().judge(request(Language::python3, "print(int(input()) * 2)\n", tests, opt));
  EXPECT_EQ(all.tests.size(), 3u);
  EXPECT_EQ(all.passed, 2);
  EXPECT_DOUBLE_EQ(all.score, 0.0);
}

TEST(SandboxJudgeTest, ExitCodeZeroWithoutTheRightOutputFails) {
  JudgeResult r = shared_sandbox().judge(request(Language::python3, "import sys\nsys.exit(0)\n", kSumTests));
  EXPECT_EQ(r.passed, 0);
  EXPECT_EQ(r.outcome, Outcome::wrong_answer);
  JudgeResult crash = shared_sandbox().judge(request(
      Language::python3, "a, b = map(int, input().split())\nprint(a + b)\nraise SystemExit(1)\n", kSumTests));
  EXPECT_EQ(crash.passed, 0) << "right output but a failing exit is not a pass";
  EXPECT_EQ(crash.outcome, Outcome::runtime_error);
}

TEST(SandboxJudgeTest, ComparisonModes) {
  EXPECT_TRUE(outputs_match("42\n", "42\n", Comparison::exact));
  EXPECT_FALSE(outputs_match("42", "42\n", Comparison::exact));
  EXPECT_TRUE(outputs_match("1 2  \n3\n\n\n", "1 2\n3", Comparison::lines));
  EXPECT_FALSE(outputs_match("1  2\n3\n", "1 2\n3\n", Comparison::lines))
      << "inner whitespace counts in lines mode";
  EXPECT_FALSE(outputs_match("1\n2\n", "1 2\n", Comparison::lines));
  EXPECT_TRUE(outputs_match("1\n2\n", "1 2\n", Comparison::tokens));
  EXPECT_TRUE(outputs_match("  a\tb\r\n", "a b", Comparison::tokens));
  EXPECT_FALSE(outputs_match("a b c", "a b", Comparison::tokens));
  EXPECT_TRUE(outputs_match("", "\n\n", Comparison::lines));
  std::string why;
  EXPECT_FALSE(outputs_match("1\n2\n", "1\n3\n", Comparison::lines, &why));
  EXPECT_EQ(why, "line 2: expected '3', got '2'");

  JudgeOptions exact;
  exact.comparison = Comparison::exact;
  JudgeResult r = shared_sandbox().judge(
      request(Language::python3, "print(42, end='')\n", {TestCase::io("", "42\n")}, exact));
  EXPECT_EQ(r.outcome, Outcome::wrong_answer);
  JudgeResult lenient =
      shared_sandbox().judge(request(Language::python3, "print(42, end='')\n", {TestCase::io("", "42\n")}));
  EXPECT_EQ(lenient.outcome, Outcome::ok);
}

TEST(SandboxJudgeTest, AssertTestsPassOnlyWhenTheyRunToTheEnd) {
  const std::string good = "def add(a, b):\n    return a + b\n";
  std::vector<TestCase> tests = {TestCase::assertion("assert add(1, 2) == 3"),
                                 TestCase::assertion("assert add(-1, 1) == 0\nassert add(2, 2) == 4")};
  JudgeResult r = shared_sandbox().judge(request(Language::python3, good, tests));
  EXPECT_EQ(r.outcome, Outcome::ok) << r.detail;
  EXPECT_EQ(r.passed, 2);

  JudgeResult wrong =
      shared_sandbox().judge(request(Language::python3, "def add(a, b):\n    return a - b\n", tests));
  EXPECT_EQ(wrong.passed, 0);
  EXPECT_EQ(wrong.outcome, Outcome::wrong_answer);
  EXPECT_THAT(wrong.tests[0].detail, HasSubstr("assertion failed"));

  // The classic hack: leave before the tests run, with exit status 0.
  for (const char* exit_call : {"import sys\nsys.exit(0)\n", "import os\nos._exit(0)\n", "exit()\n"}) {
    JudgeResult hack = shared_sandbox().judge(request(Language::python3, good + exit_call, tests));
    EXPECT_EQ(hack.passed, 0) << exit_call;
    EXPECT_EQ(hack.outcome, Outcome::wrong_answer) << exit_call;
    EXPECT_THAT(hack.tests[0].detail, HasSubstr("completion marker"));
  }
}

TEST(SandboxJudgeTest, AssertTestsInCAndCpp) {
  std::vector<TestCase> tests = {TestCase::assertion("assert(square(3) == 9);"),
                                 TestCase::assertion("assert(square(-4) == 16); printf(\"checked\\n\");")};
  JudgeResult c =
      shared_sandbox().judge(request(Language::c, "int square(int x) { return x * x; }\n", tests));
  EXPECT_EQ(c.outcome, Outcome::ok) << c.detail;
  EXPECT_EQ(c.tests[1].stdout_data, "checked\n") << "the completion marker is not shown";
  JudgeResult bad =
      shared_sandbox().judge(request(Language::cpp, "int square(int x) { return x + x; }\n", tests));
  EXPECT_EQ(bad.passed, 0);
  EXPECT_EQ(bad.outcome, Outcome::wrong_answer);
  JudgeResult early = shared_sandbox().judge(
      request(Language::c, "#include <stdlib.h>\nint square(int x) { exit(0); }\n", tests));
  EXPECT_EQ(early.passed, 0);
}

TEST(SandboxJudgeTest, CompileErrorFailsEveryTest) {
  JudgeResult r = shared_sandbox().judge(request(Language::cpp, "int main() { return x; }\n", kSumTests));
  EXPECT_EQ(r.outcome, Outcome::compile_error);
  EXPECT_EQ(r.passed, 0);
  EXPECT_DOUBLE_EQ(r.score, 0.0);
  ASSERT_TRUE(r.compile.has_value());
  EXPECT_THAT(r.compile->stderr_data, HasSubstr("was not declared"));
}

TEST(SandboxJudgeTest, TimeoutInOneTestDoesNotStopTheOthers) {
  Limits l = quick_limits();
  l.wall_ms = 500;
  JudgeOptions opt;
  opt.limits = l;
  JudgeRequest req{Language::python3,
                   "n = int(input())\nwhile n == 0:\n    pass\nprint(n)\n",
                   {TestCase::io("0\n", "0\n"), TestCase::io("7\n", "7\n")},
                   opt};
  JudgeResult r = shared_sandbox().judge(req);
  EXPECT_EQ(r.tests[0].outcome, Outcome::timeout);
  EXPECT_EQ(r.tests[1].outcome, Outcome::ok);
  EXPECT_DOUBLE_EQ(r.score, 0.5);
  EXPECT_EQ(r.outcome, Outcome::timeout);
}

TEST(SandboxJudgeTest, NoTestsIsBadInput) {
  EXPECT_THROW(shared_sandbox().judge(request(Language::python3, "print(1)", {})), SandboxError);
}

TEST(SandboxJudgeTest, JudgeAllKeepsTheOrder) {
  std::vector<JudgeRequest> reqs;
  for (int i = 0; i < 6; ++i)
    reqs.push_back(
        request(Language::python3, "print(" + std::to_string(i) + ")\n", {TestCase::io("", "3\n")}));
  auto results = shared_sandbox().judge_all(reqs);
  ASSERT_EQ(results.size(), 6u);
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(results[i].outcome, i == 3 ? Outcome::ok : Outcome::wrong_answer) << i;
}

TEST(SandboxJudgeTest, FreeFunctionJudge) {
  JudgeResult r = judge("print(input()[::-1])\n", Language::python3, {TestCase::io("abc\n", "cba\n")});
  EXPECT_EQ(r.outcome, Outcome::ok) << r.detail;
}

}  // namespace
}  // namespace rlwb::sandbox::testing
