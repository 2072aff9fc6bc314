// Reward type "format": a regular expression over the response text.
#include "tests/rewards/modules/reward_test_support.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

namespace {
const std::vector<std::string> kIn = {"response_text", "response_mask"};
}

TEST(FormatReward, SearchFindsThePatternAnywhereAndScoresMatchAndMiss) {
  auto fmt = make_reward("format", {{"pattern", "Answer: -?[0-9]+"}, {"on_match", 0.5}, {"on_miss", -1}});
  auto s =
      score(*fmt, batch_of({"so... Answer: 42\n", "Answer: forty", "answer: 3", "x\nAnswer: -7 done"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{0.5, -1, -1, 0.5}));
  EXPECT_EQ(s.details[0]["matched"], true);
  EXPECT_EQ(s.details[1]["matched"], false);
  EXPECT_DOUBLE_EQ(s.metrics["reward/rw/mean"].get<double>(), -0.25);
}

TEST(FormatReward, FullMatchNeedsTheWholeResponse) {
  auto fmt = make_reward("format", {{"pattern", "print\\([^)]*\\)"}, {"match", "full"}});
  auto s = score(*fmt, batch_of({"print(42)", "print(42)\n", "x=1;print(42)"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0, 0}));
}

TEST(FormatReward, IgnoreCase) {
  auto fmt = make_reward("format", {{"pattern", "^answer"}, {"ignore_case", true}});
  auto s = score(*fmt, batch_of({"ANSWER: 1", "the answer"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
}

// libstdc++'s backtracking matcher recurses per character and crashes on
// long texts; the module uses the non-recursive one.
TEST(FormatReward, LongResponseIsMatchedWithoutOverflowingTheStack) {
  auto fmt = make_reward("format", {{"pattern", "(a|b)*x"}, {"match", "full"}});
  std::string long_text(200000, 'a');
  auto s = score(*fmt, batch_of({long_text + "x", long_text + "y"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
}

TEST(FormatReward, BadConfigIsNamed) {
  expect_error([] { make_reward("format", json::object()); }, {"rewards.r.config.pattern", "is missing"});
  expect_error(
      [] {
        make_reward("format", {{"pattern", "(unclosed"}});
      },
      {"rewards.r.config.pattern", "'(unclosed' is not a valid regular expression"});
  expect_error(
      [] {
        make_reward("format", {{"pattern", "x"}, {"match", "partial"}});
      },
      {"rewards.r.config.match", "'partial' is not one of full, search"});
  expect_error(
      [] {
        make_reward("format", {{"pattern", "x"}, {"on_match", "one"}});
      },
      {"rewards.r.config.on_match", "must be a number"});
  expect_error(
      [] {
        make_reward("format", {{"pattern", 5}});
      },
      {"rewards.r.config.pattern", "must be a string"});
}
