// Reward type "weighted_sum": other rewards of the same file, built through
// the type registry, called on the node's input, scores summed by weight,
// details merged by term name; and its configuration errors.
#include "tests/rewards/modules/reward_test_support.h"
#include "tests/test_paths.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

namespace {

const json kRewards = {
    {"correct", {{"type", "math"}}},
    {"fmt", {{"type", "format"}, {"config", {{"pattern", "^####"}}}}},
    {"short", {{"type", "length"}, {"config", {{"unit", "chars"}, {"target", 6}, {"penalty", 0.1}}}}},
    {"total",
     {{"type", "weighted_sum"}, {"config", {{"terms", {{"correct", 1.0}, {"fmt", 0.5}, {"short", 2}}}}}}},
};

}  // namespace

TEST(WeightedSumReward, AddsWeightedTermScoresOnTheLastTokenAndMergesDetails) {
  auto exp = experiment_of_rewards(kRewards);
  auto total = build_reward(exp, "total");
  auto b = batch_of({"#### 12", "Answer: 12", "#### 7 and more"}, {{"ground_truth", {"12", "12", "12"}}});
  auto s = score(*total, b, {"response_text", "ground_truth", "response_mask"},
                 {"token_level_scores", "reward_details"}, "sum");
  // row 0: correct 1 + fmt 0.5*1 + short 2*(-0.1*1); row 1: 1 + 0 + 2*(-0.4); row 2: 0 + 0.5 + 2*(-0.9)
  std::vector<double> expected = {1.3, 0.2, -1.3};
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_NEAR(s.scores[i], expected[i], 1e-5) << "row " << i;
  EXPECT_NEAR(s.tokens[0][6].item<float>(), 1.3f, 1e-5);  // "#### 12" has 7 tokens
  EXPECT_NEAR(s.tokens[0].abs().sum().item<float>(), 1.3f, 1e-5);
  EXPECT_EQ(s.details[0]["correct"]["extracted"], "12");
  EXPECT_EQ(s.details[0]["fmt"]["matched"], true);
  EXPECT_EQ(s.details[2]["short"]["length"], 15);
  EXPECT_NEAR(s.details[1]["short"]["score"].get<double>(), -0.4, 1e-6);
  EXPECT_NEAR(s.metrics["reward/sum/mean"].get<double>(), 0.2 / 3, 1e-5);
  EXPECT_NEAR(s.metrics["reward/sum/correct/mean"].get<double>(), 2.0 / 3, 1e-9);
  EXPECT_NEAR(s.metrics["reward/sum/fmt/mean"].get<double>(), 2.0 / 3, 1e-9);
}

// Math reads the ground truth and code the tests, each by its port; the
// code term runs on a real sandbox.
TEST(WeightedSumReward, TermsReadTheirOwnPortsSoCodeAndMathCombine) {
  json terms = {{"answer", {{"weight", 0.25}}}, {"runs", 1}};
  json rewards = {
      {"answer", {{"type", "math"}, {"config", {{"last_number_fallback", true}}}}},
      {"runs",
       {{"type", "code"}, {"config", {{"sandbox_binary", rlwb::testing::kSandboxBin}, {"executors", 2}}}}},
      {"both", {{"type", "weighted_sum"}, {"config", {{"terms", terms}}}}},
  };
  auto exp = experiment_of_rewards(rewards);
  auto both = build_reward(exp, "both");
  json tests = json::array({{{"expected", "42\n"}}});
  auto b = batch_of({"print(42)", "print(41)"}, {{"ground_truth", {"42", "41"}}, {"tests", {tests, tests}}});
  auto s = score(*both, b, {"response_text", "ground_truth", "tests", "response_mask"});
  EXPECT_NEAR(s.scores[0], 1.25, 1e-6) << s.details[0];
  EXPECT_NEAR(s.scores[1], 0.25, 1e-6) << s.details[1];
  EXPECT_EQ(s.details[0]["runs"]["verdict"], "ok");
  EXPECT_EQ(s.details[1]["runs"]["verdict"], "wrong_answer");
}

TEST(WeightedSumReward, ATermsOwnInIsAnErrorThatSaysPortsAreByName) {
  json rewards = kRewards;
  rewards["total"]["config"]["terms"] = {
      {"correct", {{"weight", 1}, {"in", {"response_text", "gold", "response_mask"}}}}};
  auto exp = experiment_of_rewards(rewards);
  expect_error([&] { build_reward(exp, "total"); },
               {"rewards.total.config.terms.correct.in", "reads the node's input ports by name"});
}

TEST(WeightedSumReward, FailingTermIsNamed) {
  auto exp = experiment_of_rewards(kRewards);
  auto total = build_reward(exp, "total");
  auto b = batch_of({"#### 1"});
  expect_error(
      [&] {
        score(*total, b, {"response_text", "response_mask"});
      },
      {"weighted_sum reward 'total'", "term 'correct'", "needs input port 'ground_truth'"});
}

TEST(WeightedSumReward, BadConfigIsNamed) {
  auto with_terms = [](json terms) {
    json rewards = kRewards;
    rewards["total"]["config"] = {{"terms", terms}};
    auto exp = experiment_of_rewards(rewards);
    build_reward(exp, "total");
  };
  expect_error(
      [&] {
        with_terms({{"corect", 1}});
      },
      {"rewards.total.config.terms.corect", "there is no reward 'corect'", "correct, fmt, short"});
  expect_error([&] { with_terms(json::object()); },
               {"rewards.total.config.terms", "at least one other reward"});
  expect_error(
      [&] {
        with_terms({{"fmt", "half"}});
      },
      {"rewards.total.config.terms.fmt", "must be a weight"});
  expect_error(
      [&] {
        with_terms({{"fmt", {{"weight", 1}, {"columns", {"x"}}}}});
      },
      {"rewards.total.config.terms.fmt", "unknown key 'columns'"});
  expect_error(
      [&] {
        with_terms({{"fmt", 1}, {"total", 1}});
      },
      {"rewards.total.config.terms", "cannot contain itself"});
}

TEST(WeightedSumReward, CycleThroughAnotherSumIsAnError) {
  json rewards = kRewards;
  rewards["a"] = {{"type", "weighted_sum"}, {"config", {{"terms", {{"b", 1}}}}}};
  rewards["b"] = {{"type", "weighted_sum"}, {"config", {{"terms", {{"fmt", 1}, {"a", 2}}}}}};
  auto exp = experiment_of_rewards(rewards);
  expect_error([&] { build_reward(exp, "a"); }, {"rewards.a.config.terms", "a -> b -> a"});
}
