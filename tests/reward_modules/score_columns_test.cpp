// What every reward type shares (rewards/modules/score_columns.h): the score
// on each row's last response token as verl does, the mean metric, and
// clear errors for columns that are missing, of the wrong kind, or out of
// place, and for config keys a type does not know.
#include "reward_test_support.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

TEST(RewardScoreColumns, ScoreLandsOnTheLastResponseTokenOfEachRow) {
  auto math = make_reward("math", json::object());
  core::Batch b;
  b.set_objects("responses", {"#### 4", "#### 5", "the answer is \\boxed{7}"});
  b.set_objects("answers", {"4", "4", "7"});
  b.set_tensor("response_mask", mask_of({3, 6, 1}, 8));
  auto s = score(*math, b, {"responses", "answers", "response_mask"});
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
  b.set_objects("responses", {"", "x"});
  b.set_tensor("response_mask", mask_of({0, 1}, 4));
  auto s = score(*fmt, b, {"responses", "response_mask"});
  EXPECT_FLOAT_EQ(s.tokens[0][0].item<float>(), 1.0f);
  EXPECT_DOUBLE_EQ(s.scores[1], 0.0);
}

TEST(RewardScoreColumns, MissingInputColumnIsNamed) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  expect_error(
      [&] {
        score(*fmt, b, {"answers", "response_mask"});
      },
      {"reward node 'rw'", "input column 'answers' is not in the batch"});
}

TEST(RewardScoreColumns, TensorWhereTextIsExpectedIsAWrongKindError) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  expect_error(
      [&] {
        score(*fmt, b, {"response_mask", "response_mask"});
      },
      {"'response_mask'", "is a tensor column", "must be an object column"});
}

TEST(RewardScoreColumns, LastInputMustBeTheResponseMask) {
  auto math = make_reward("math", json::object());
  auto b = batch_of({"#### 1"}, {{"answers", {"1"}}});
  expect_error(
      [&] {
        score(*math, b, {"responses", "response_mask", "answers"});
      },
      {"last input column 'answers' must be the response mask", "an object column"});
}

TEST(RewardScoreColumns, TooFewInputsSaysWhatTheNodeNeeds) {
  auto math = make_reward("math", json::object());
  auto b = batch_of({"#### 1"});
  expect_error(
      [&] {
        score(*math, b, {"responses", "response_mask"});
      },
      {"needs at least 3 input columns", "the response text, what the type reads, then the response mask",
       "the node has 2"});
}

TEST(RewardScoreColumns, NodeWithoutOutputColumnIsAnError) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  expect_error([&] { score(*fmt, b, {"responses", "response_mask"}, {}); }, {"needs an output column"});
}

TEST(RewardScoreColumns, UnknownMethodIsNamed) {
  auto fmt = make_reward("format", {{"pattern", "x"}});
  auto b = batch_of({"x"});
  std::vector<std::string> in = {"responses", "response_mask"}, out = {"s"};
  core::RewardCallContext ctx{0, "rw", in, out};
  expect_error([&] { fmt->call("grade", b, ctx); }, {"reward 'r' (format) has no method 'grade'", "'score'"});
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

TEST(RewardConfigErrors, ConfigThatIsNotAMapIsAnError) {
  expect_error([] { make_reward("format", json::array({1, 2})); }, {"rewards.r.config", "must be a map"});
}
