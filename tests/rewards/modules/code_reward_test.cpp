// Reward type "code" on real rlwb-sandbox services (started by the module,
// as in a run): each row's program judged against its own tests, verdicts
// and failing tests in the details, scoring modes, test-case forms, code
// blocks in prose, a program prefix (HumanEval's prompt), a batch spread
// over the executors, the service's lifetime, and clear errors for bad
// config and bad test columns.
#include "rewards/modules/sandbox_connection.h"
#include "tests/rewards/modules/reward_test_support.h"
#include "tests/test_paths.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

using namespace rlwb::rewards::testing;
using namespace rlwb;

namespace {

const std::vector<std::string> kIn = {"response_text", "tests", "response_mask"};

const char* kAdd = "a, b = map(int, input().split())\nprint(a + b)\n";
const char* kSubtract = "a, b = map(int, input().split())\nprint(a - b)\n";

json add_tests() {
  return json::array({{{"stdin", "2 0\n"}, {"expected", "2\n"}}, {{"stdin", "1 2\n"}, {"expected", "3\n"}}});
}

json config(json extra = json::object()) {
  json c = {{"sandbox_binary", rlwb::testing::kSandboxBin},
            {"executors", 4},
            {"limits", {{"wall_ms", 2000}, {"cpu_ms", 1000}}}};
  c.update(extra);
  return c;
}

core::Batch with_tests(const std::vector<std::string>& programs, const json& tests) {
  return batch_of(programs, {{"tests", std::vector<json>(programs.size(), tests)}});
}

class CodeReward : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { module_ = make_reward("code", config()).release(); }
  static void TearDownTestSuite() {
    delete module_;
    module_ = nullptr;
  }
  static core::RewardModule* module_;
};
core::RewardModule* CodeReward::module_ = nullptr;

}  // namespace

TEST_F(CodeReward, JudgesEachProgramByOutputWithVerdictsAndFailingTest) {
  std::vector<std::string> programs = {
      kAdd,                                   // right
      kSubtract,                              // right on "2 0" only
      "import sys\nsys.exit(0)\nprint(3)\n",  // exits 0 early without output
      "while True:\n    pass\n",              // never ends
      "print(1 +\n",                          // syntax error
  };
  auto s = score(*module_, with_tests(programs, add_tests()), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0.5, 0, 0, 0}));
  std::vector<std::string> verdicts;
  for (auto& d : s.details) verdicts.push_back(d["verdict"]);
  EXPECT_EQ(verdicts,
            (std::vector<std::string>{"ok", "wrong_answer", "wrong_answer", "timeout", "runtime_error"}));
  EXPECT_EQ(s.details[0]["failing_test"], nullptr);
  EXPECT_EQ(s.details[0]["passed"], 2);
  EXPECT_EQ(s.details[1]["failing_test"], 1);
  EXPECT_EQ(s.details[1]["passed"], 1);
  EXPECT_EQ(s.details[2]["failing_test"], 0);
  EXPECT_NE(s.details[4]["stderr"].get<std::string>().find("SyntaxError"), std::string::npos) << s.details[4];
  EXPECT_DOUBLE_EQ(s.metrics["reward/rw/mean"].get<double>(), 0.3);
  EXPECT_DOUBLE_EQ(s.metrics["reward/rw/verdict/wrong_answer"].get<double>(), 0.4);
  // The score sits on the last response token.
  int64_t last = static_cast<int64_t>(std::string(kAdd).size()) - 1;
  EXPECT_FLOAT_EQ(s.tokens[0][last].item<float>(), 1.0f);
  EXPECT_FLOAT_EQ(s.tokens[0].sum().item<float>(), 1.0f);
}

TEST_F(CodeReward, EachRowHasItsOwnTestsInEitherForm) {
  core::Batch b = batch_of({"print(input()[::-1])", "print(int(input()) * 2)", "print(6*7)"},
                           {{"tests",
                             {json::array({{{"stdin", "abc\n"}, {"expected", "cba\n"}}}),
                              json{{"inputs", {"1\n", "5\n"}}, {"outputs", {"2\n", "10\n"}}},
                              json(R"([{"expected": "42"}])")}}});  // JSON in a string, no stdin
  auto s = score(*module_, b, kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 1, 1})) << s.details[0] << s.details[1] << s.details[2];
  EXPECT_EQ(s.details[1]["total"], 2);
}

TEST_F(CodeReward, AssertTestsFailAProgramThatExitsBeforeThem) {
  json tests = json::array({{{"assert", "assert add(2, 3) == 5"}}, {{"assert", "assert add(-1, 1) == 0"}}});
  auto s = score(*module_,
                 with_tests({"def add(a, b):\n    return a + b\n", "def add(a, b):\n    return a * b\n",
                             "import os\ndef add(a, b):\n    return a + b\nos._exit(0)\n"},
                            tests),
                 kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0, 0}));
  EXPECT_EQ(s.details[1]["verdict"], "wrong_answer");
  EXPECT_EQ(s.details[2]["verdict"], "wrong_answer");
}

TEST_F(CodeReward, ProgramIsTakenFromTheLastCodeBlockOfProse) {
  auto s =
      score(*module_,
            with_tests({"First try:\n```python\nprint(1)\n```\nBetter:\n```python\nprint(42)\n```\nDone.",
                        "just print(42) in prose"},
                       json::array({{{"expected", "42\n"}}})),
            kIn);
  EXPECT_EQ(s.scores[0], 1) << s.details[0];
  EXPECT_EQ(s.details[1]["verdict"], "runtime_error");  // prose run as python
}

TEST_F(CodeReward, AProgramPrefixRunsFirstAndACodeBlockStartsOnALineOfItsOwn) {
  // Text continues the prefix as written; a fenced program gets its own line.
  core::Batch b =
      batch_of({"2)\n", "```python\nprint(six() * 7)\n```", "print(six() * 7)\n"},
               {{"tests", std::vector<json>(3, json::array({{{"expected", "42\n"}}}))},
                {"program_prefix", {"print(4", "def six():\n    return 6", "def six():\n    return 6\n"}}});
  auto s = score(*module_, b, {"response_text", "tests", "program_prefix", "response_mask"});
  EXPECT_EQ(s.scores, (std::vector<double>{1, 1, 1})) << s.details[0] << s.details[1];
}

TEST(CodeRewardConfig, FencedOnlyScoresZeroWithoutACodeBlockAndAllOrNothingNeedsEveryTest) {
  auto module = make_reward("code", config({{"extract", "fenced"}, {"scoring", "all_or_nothing"}}));
  auto s = score(
      *module,
      with_tests({"print(42)", std::string("```\n") + kSubtract + "```", "```\n" + std::string(kAdd) + "```"},
                 add_tests()),
      kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{0, 0, 1}));
  EXPECT_EQ(s.details[0]["verdict"], "no_code");
  EXPECT_EQ(s.details[1]["verdict"], "wrong_answer");
}

TEST(CodeRewardConfig, CompiledLanguage) {
  auto module = make_reward("code", config({{"language", "c"}}));
  auto s = score(
      *module,
      with_tests({"#include <stdio.h>\nint main(){int a,b;scanf(\"%d %d\",&a,&b);printf(\"%d\\n\",a+b);}\n",
                  "int main( {"},
                 add_tests()),
      kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
  EXPECT_EQ(s.details[1]["verdict"], "compile_error");
  EXPECT_NE(s.details[1]["stderr"].get<std::string>().find("error"), std::string::npos) << s.details[1];
}

// 16 programs that each sleep 0.5 s take >= 8 s one after another; the
// module sends them at once and the service's 4 executors overlap them
// (>= 2 s; the rest of the bound is for a loaded machine).
TEST_F(CodeReward, BatchIsJudgedConcurrentlyOnTheExecutorPool) {
  std::vector<std::string> programs;
  for (int k = 0; k < 16; ++k)
    programs.push_back("import time\ntime.sleep(0.5)\nprint(input())  # " + std::to_string(k));
  auto start = std::chrono::steady_clock::now();
  auto s = score(*module_, with_tests(programs, json::array({{{"stdin", "7\n"}, {"expected", "7\n"}}})), kIn);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.scores, std::vector<double>(16, 1.0));
  EXPECT_LT(seconds, 5.0) << "16 x 0.5 s on 4 executors took " << seconds << " s";
  EXPECT_EQ(s.metrics["reward/rw/programs_run"], 16);
}

TEST_F(CodeReward, IdenticalProgramsWithIdenticalTestsAreJudgedOnce) {
  core::Batch b = batch_of({kAdd, kSubtract, kAdd, kAdd, kSubtract},
                           {{"tests",
                             {add_tests(), add_tests(), add_tests(),
                              json::array({{{"stdin", "5 5\n"}, {"expected", "10\n"}}}), add_tests()}}});
  auto s = score(*module_, b, kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0.5, 1, 1, 0.5}));
  EXPECT_EQ(s.details[2], s.details[0]);
  EXPECT_EQ(s.metrics["reward/rw/programs_run"], 3);  // add, subtract, add on other tests
}

// timeout_s bounds the wait for a batch: a row still running then scores 0
// as a sandbox_error (its fate is unknown), the others keep their scores;
// when no row came back at all, the node fails instead of training on zeros.
TEST(CodeRewardConfig, BatchTimeoutBoundsTheWait) {
  auto module = make_reward("code", config({{"timeout_s", 1}, {"limits", {{"wall_ms", 5000}}}}));
  const std::string slow = "import time\ntime.sleep(3)\nprint(1)\n";
  json tests = json::array({{{"expected", "1\n"}}});
  auto start = std::chrono::steady_clock::now();
  auto s = score(*module, with_tests({slow, "print(1)"}, tests), kIn);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.5);
  EXPECT_EQ(s.scores, (std::vector<double>{0, 1}));
  EXPECT_EQ(s.details[0]["verdict"], "sandbox_error");
  EXPECT_NE(s.details[0]["detail"].get<std::string>().find("no reply"), std::string::npos) << s.details[0];
  start = std::chrono::steady_clock::now();
  expect_error([&] { score(*module, with_tests({slow + "# again"}, tests), kIn); },
               {"reward node 'rw' (code reward 'r')", "the sandbox failed on all 1 programs", "no reply"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 2.5);
}

TEST(CodeRewardService, StartedServiceStopsWithItsOwnerAndLeavesNoFiles) {
  pid_t pid = 0;
  std::string address;
  {
    rewards::SandboxConnectionOptions o;
    o.binary = rlwb::testing::kSandboxBin;
    o.executors = 1;
    rewards::SandboxConnection connection(o, "test");
    pid = connection.service_pid();
    address = connection.address();
    ASSERT_GT(pid, 0);
    EXPECT_EQ(kill(pid, 0), 0);
    EXPECT_TRUE(std::filesystem::exists(address.substr(std::string("ipc://").size())));
  }
  EXPECT_NE(kill(pid, 0), 0) << "the service outlived its owner";
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::path(address.substr(6)).parent_path()));
}

TEST(CodeRewardService, ModuleConnectsToAServiceAtAGivenAddress) {
  rewards::SandboxConnectionOptions o;
  o.binary = rlwb::testing::kSandboxBin;
  o.executors = 1;
  rewards::SandboxConnection running(o, "test");
  auto module = make_reward("code", {{"address", running.address()}});
  auto s = score(*module, with_tests({kAdd}, add_tests()), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1}));
}

TEST(CodeRewardService, NoServiceAtTheAddressIsAnErrorWithinTheStartupBound) {
  auto start = std::chrono::steady_clock::now();
  expect_error(
      [] {
        make_reward("code", {{"address", "ipc:///tmp/rlwb-nobody-here.sock"}, {"startup_timeout_s", 1}});
      },
      {"code reward 'r'", "no rlwb-sandbox service answers at ipc:///tmp/rlwb-nobody-here.sock",
       "rlwb sandbox serve"});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 5);
}

TEST(CodeRewardService, ServiceThatDiesIsReportedOnTheNextBatch) {
  rewards::SandboxConnectionOptions o;
  o.binary = rlwb::testing::kSandboxBin;
  o.executors = 1;
  rewards::SandboxConnection connection(o, "code reward 'r'");
  ASSERT_EQ(kill(connection.service_pid(), SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  sandbox::JudgeRequest req;
  req.program = "print(1)";
  req.tests = {sandbox::TestCase::io("", "1\n")};
  expect_error([&] { connection.judge_all({req}); },
               {"code reward 'r'", "the rlwb-sandbox service it started", "killed by signal 9"});
}

TEST(CodeRewardService, MissingSandboxProgramIsNamed) {
  expect_error(
      [] {
        make_reward("code", {{"sandbox_binary", "/nonexistent/rlwb-sandbox"}});
      },
      {"'/nonexistent/rlwb-sandbox' does not exist or is not executable", "RLWB_SANDBOX_BIN"});
}

TEST(CodeRewardConfig, BadSettingsAreNamed) {
  expect_error(
      [] {
        make_reward("code", {{"language", "rust"}});
      },
      {"rewards.r.config.language", "unknown language 'rust'"});
  expect_error(
      [] {
        make_reward("code", {{"scoring", "best"}});
      },
      {"rewards.r.config.scoring", "'best' is not one of all_or_nothing, pass_rate"});
  expect_error(
      [] {
        make_reward("code", {{"limits", {{"wall_ms", 0}}}});
      },
      {"rewards.r.config.limits", "wall_ms"});
  expect_error(
      [] {
        make_reward("code", {{"limits", {{"walltime", 1}}}});
      },
      {"rewards.r.config.limits", "walltime"});
  expect_error(
      [] {
        make_reward("code", {{"address", "ipc:///x"}, {"executors", 2}});
      },
      {"rewards.r.config.address", "do not apply"});
  expect_error(
      [] {
        make_reward("code", {{"timeout_s", 0}});
      },
      {"rewards.r.config.timeout_s", "out of range"});
}

TEST_F(CodeReward, BadTestsNameTheRowThePortAndTheForm) {
  core::Batch b = batch_of({kAdd, kAdd}, {{"tests", {add_tests(), json::array({{{"stdin", "1 2\n"}}})}}});
  expect_error(
      [&] { score(*module_, b, kIn); },
      {"row 1 of input port 'tests'", "test 0 has neither 'expected' nor 'assert'", "docs/rewards.md"});
  core::Batch empty = batch_of({kAdd}, {{"tests", {json::array()}}});
  expect_error([&] { score(*module_, empty, kIn); }, {"row 0 of input port 'tests'", "has no test cases"});
  core::Batch tensor = batch_of({kAdd});
  tensor.set_tensor("tests", torch::zeros({1}));
  expect_error([&] { score(*module_, tensor, kIn); }, {"input port 'tests'", "is bound to a tensor column"});
}
