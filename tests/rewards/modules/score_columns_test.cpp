// What every reward type shares (rewards/modules/score_columns.h): the score
// on each row's last response token as verl does, the mean metric, inputs
// by port (never by position), clear errors for ports that are unbound or
// of the wrong kind, and for config keys a type does not know.
#include "tests/rewards/modules/reward_test_support.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

TEST(RewardScoreColumns, ScoreLandsOnTheLastResponseTokenOfEachRow) {
  auto math = make_reward("math", json::object());
  core::Batch b;
  b.set_objects("response_text", {"#### 4", "#### 5", "the answer is \\boxed{7}"});
  b.set_objects("ground_truth", {"4", "4", "7"});
  b.set_tensor("response_mask", mask_of({3, 6, 1}, 8));
  auto s = score(*math, b, {"response_text", "ground_truth", "response_mask"});
  ASSERT_EQ(s.tokens.sizes(), (std::vector<int64_t>{3, 8}));
  EXPECT_EQ(s.tokens.scalar_type(), torch::kFloat32);
  auto expected = torch::zeros({3, 8});
  expected[0][2] = 1;  // row 0: 3 tokens, right
  expected[2][0] = 1;  // row 2: 1 token, right; row 1 is wrong: all zeros
  EXPECT_TRUE(torch::equal(s.tokens, expected)) << s.tokens;
  EXPECT_DOUBLE_EQ(s.metrics["reward/rw/mean"].get<double>(), 2.0 / 3);
  EXPECT_EQ(s.details[1]["extracted"], "5");
}

TEST(RewardScoreColumns, EmptyResponseKeepsItsScoreAtPositionZero) {
  auto fmt = make_reward("format", {{"pattern", "^$"}, {"match", "full"}});
  core::Batch b;
  b.set_objects("response_text", {"", "x"});
  b.set_tensor("response_mask", mask_of({0, 1}, 4));
  auto s = score(*fmt, b, {"response_text", "response_mask"});
  EXPECT_FLOAT_EQ(s.tokens[0][0].item<float>(), 1.0f);
  EXPECT_DOUBLE_EQ(s.scores[1], 0.0);
}

TEST(RewardScoreColumns, UnboundInputPortIsNamedWithHowToBindIt) {
  auto math = make_reward("math", json::object());
  auto b = batch_of({"#### 1"}, {{"answers", {"1"}}});
  expect_error(
      [&] {
        score(*math, b, {"response_text", "response_mask"});
      },
      {"reward node 'rw' (math reward 'r')", "needs input port 'ground_truth'",
       "in: {ground_truth: <column>, ...}"});
}

TEST(RewardScoreColumns, AColumnOfAnotherNameReachesThePortItIsBoundTo) {
  auto math = make_reward("math", json::object());
  auto b = batch_of({"#### 1", "#### 2"}, {{"answers", {"1", "1"}}});
  // in: {response_text: response_text, ground_truth: answers, response_mask: response_mask},
  // out: {token_level_scores: math_scores, reward_details: why}
  auto s =
      score(*math, b, {"response_text", "answers", "response_mask"}, {"math_scores", "why"}, "rw",
            {"response_text", "ground_truth", "response_mask"}, {"token_level_scores", "reward_details"});
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
  EXPECT_EQ(s.details[1]["extracted"], "2");
}

TEST(RewardScoreColumns, TensorWhereTextIsExpectedIsAWrongKindError) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  expect_error(
      [&] {
        score(*fmt, b, {"response_mask", "response_mask"}, {"token_level_scores", "reward_details"}, "rw",
              {"response_text", "response_mask"});
      },
      {"input port 'response_text'", "is bound to a tensor column", "must be an object column"});
}

TEST(RewardScoreColumns, TheResponseMaskIsAPortNotAPosition) {
  auto math = make_reward("math", json::object());
  auto b = batch_of({"#### 1"}, {{"ground_truth", {"1"}}});
  // Any order of the node's columns: the mask is found by its port.
  auto s = score(*math, b, {"response_mask", "ground_truth", "response_text"});
  EXPECT_EQ(s.scores, (std::vector<double>{1}));
  expect_error(
      [&] {
        score(*math, b, {"response_text", "ground_truth", "ground_truth"}, {"token_level_scores"}, "rw",
              {"response_text", "ground_truth", "response_mask"});
      },
      {"input port 'response_mask' must be a tensor [rows, response_len]", "an object column"});
}

TEST(RewardScoreColumns, ANodeMayTakeTheScoresWithoutTheDetails) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto s = score(*fmt, batch_of({"x", "y"}), {"response_text", "response_mask"}, {"token_level_scores"});
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
  EXPECT_TRUE(s.details.empty());
}

TEST(RewardScoreColumns, UnknownMethodIsNamed) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  const core::WantedPorts wanted;
  core::RewardCallContext ctx{0, "rw", wanted};
  expect_error([&] { fmt->call("grade", b, ctx); }, {"reward 'r' (format) has no method 'grade'", "'score'"});
}

TEST(RewardTypes, EveryTypeDeclaresTheScorePorts) {
  for (const auto& [name, type] : rewards::builtin_reward_types()) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(type.methods.count("score"));
    const auto& ports = type.methods.at("score");
    EXPECT_TRUE(ports.known);
    ASSERT_NE(ports.find_in("response_mask"), nullptr);
    EXPECT_TRUE(ports.find_in("response_mask")->required);
    EXPECT_NE(ports.find_out("token_level_scores"), nullptr);
    EXPECT_NE(ports.find_out("reward_details"), nullptr);
  }
  // weighted_sum takes what its terms may read.
  const auto& sum = rewards::builtin_reward_types().at("weighted_sum").methods.at("score");
  EXPECT_NE(sum.find_in("ground_truth"), nullptr);
  EXPECT_NE(sum.find_in("tests"), nullptr);
  EXPECT_FALSE(sum.find_in("ground_truth")->required);
}

TEST(RewardConfigErrors, UnknownKeyOfEveryTypeIsNamedWithTheTypesSettings) {
  for (const std::string type : {"math", "format", "length", "code", "weighted_sum"})
    expect_error(
        [&] {
          make_reward(type, {{"pattern", "x"}, {"penalty", 1}, {"terms", {{"a", 1}}}, {"colour", 1}});
        },
        {"rewards.r.config.", "is not a setting of type '" + type + "'", "docs/rewards.md"});
}

TEST(RewardConfigErrors, MathPercentRuleMustBeKnown) {
  expect_error(
      [] {
        make_reward("math", {{"percent", "halve"}});
      },
      {"rewards.r.config.percent", "'halve' is not one of", "drop_sign"});
  expect_error(
      [] {
        make_reward("math", {{"last_number_fallback", "yes"}});
      },
      {"rewards.r.config.last_number_fallback", "must be true or false"});
}

TEST(RewardConfigErrors, MathCompatModeMustBeKnown) {
  expect_error(
      [] {
        make_reward("math", {{"compat", "sympy"}});
      },
      {"rewards.r.config.compat", "'sympy' is not one of", "math-verify"});
}

// 2^{10} is no final answer by RLWB's rule; in the math-verify mode it is 1024.
TEST(RewardScoreColumns, MathCompatModeReachesTheChecker) {
  core::Batch b;
  b.set_objects("response_text", {"\\boxed{2^{10}}"});
  b.set_objects("ground_truth", {"1024"});
  b.set_tensor("response_mask", mask_of({1}, 2));
  auto by_default =
      score(*make_reward("math", json::object()), b, {"response_text", "ground_truth", "response_mask"});
  auto compat = score(*make_reward("math", {{"compat", "math-verify"}}), b,
                      {"response_text", "ground_truth", "response_mask"});
  EXPECT_EQ(by_default.tokens[0][0].item<float>(), 0);
  EXPECT_EQ(compat.tokens[0][0].item<float>(), 1);
}

TEST(RewardConfigErrors, ConfigThatIsNotAMapIsAnError) {
  expect_error([] { make_reward("format", json::array({1, 2})); }, {"rewards.r.config", "must be a map"});
}
