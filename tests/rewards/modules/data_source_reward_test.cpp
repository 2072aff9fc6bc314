// Reward type "by_data_source": each row scored by the reward its
// data_source names, the scores back in the batch's row order; and its
// configuration errors.
#include "tests/rewards/modules/reward_test_support.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

namespace {

json rewards_with(const json& routing) {
  return {
      {"answer", {{"type", "math"}}},
      {"fmt", {{"type", "format"}, {"config", {{"pattern", "^####"}}}}},
      {"route", {{"type", "by_data_source"}, {"config", routing}}},
  };
}

}  // namespace

TEST(DataSourceReward, EachRowIsScoredByTheRewardOfItsSourceInTheBatchsOrder) {
  auto exp =
      experiment_of_rewards(rewards_with({{"routes", {{"openai/gsm8k", "answer"}, {"style", "fmt"}}}}));
  auto route = build_reward(exp, "route");
  // Interleaved sources: math rows 0 and 2, format rows 1 and 3.
  auto b = batch_of({"#### 12", "#### 5", "Answer: 7", "no marker"},
                    {{"ground_truth", {"12", "99", "8", "1"}},
                     {"data_source", {"openai/gsm8k", "style", "openai/gsm8k", "style"}}});
  auto s = score(*route, b, {"response_text", "ground_truth", "data_source", "response_mask"});
  EXPECT_EQ(s.scores, (std::vector<double>{1, 1, 0, 0}));
  EXPECT_EQ(s.details[0]["reward"], "answer");
  EXPECT_EQ(s.details[0]["extracted"], "12");
  EXPECT_EQ(s.details[1]["reward"], "fmt");
  EXPECT_EQ(s.details[1]["data_source"], "style");
  EXPECT_EQ(s.details[3]["matched"], false);
  EXPECT_NEAR(s.tokens[0][6].item<float>(), 1.0f, 1e-6);  // on the last token of "#### 12"
  EXPECT_NEAR(s.metrics["reward/rw/mean"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(s.metrics["reward/rw/answer/mean"].get<double>(), 0.5, 1e-9);
  EXPECT_NEAR(s.metrics["reward/rw/fmt/mean"].get<double>(), 0.5, 1e-9);
}

TEST(DataSourceReward, RowsNoRouteNamesGoToTheDefaultOrAreAnErrorNamingTheSource) {
  auto b = batch_of({"#### 3", "#### 3"}, {{"ground_truth", {"3", "4"}}, {"data_source", {"gsm8k", "MATH"}}});
  auto with_default =
      experiment_of_rewards(rewards_with({{"routes", {{"gsm8k", "fmt"}}}, {"default", "answer"}}));
  auto s = score(*build_reward(with_default, "route"), b,
                 {"response_text", "ground_truth", "data_source", "response_mask"});
  EXPECT_EQ(s.scores, (std::vector<double>{1, 0}));
  EXPECT_EQ(s.details[1]["reward"], "answer");

  auto without = experiment_of_rewards(rewards_with({{"routes", {{"gsm8k", "fmt"}}}}));
  auto route = build_reward(without, "route");
  expect_error(
      [&] {
        score(*route, b, {"response_text", "ground_truth", "data_source", "response_mask"});
      },
      {"row 1 has data_source 'MATH'", "no route names (gsm8k)", "rewards.route.config.routes"});
}

TEST(DataSourceReward, BadConfigIsNamed) {
  auto with = [](const json& routing) {
    build_reward(experiment_of_rewards(rewards_with(routing)), "route");
  };
  expect_error(
      [&] {
        with({{"routes", {{"gsm8k", "anwser"}}}});
      },
      {"rewards.route.config.routes.gsm8k", "there is no reward 'anwser'", "answer, fmt"});
  expect_error([&] { with({{"routes", json::object()}}); }, {"rewards.route.config.routes", "at least one"});
  expect_error(
      [&] {
        with({{"routes", {{"gsm8k", 1}}}});
      },
      {"rewards.route.config.routes.gsm8k", "must be the name"});
  expect_error([&] { with({{"routes", {{"gsm8k", "fmt"}}}, {"fallback", "answer"}}); }, {"fallback"});
  expect_error(
      [&] {
        with({{"routes", {{"gsm8k", "route"}}}});
      },
      {"rewards.route.config.routes", "cannot contain itself"});
}
