// The name-based entry point: each estimator dispatches to its function
// with the options passed through, and missing inputs are named.
#include "core/algorithms/advantage_estimator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "core/algorithms/discounted_returns.h"
#include "core/algorithms/gae.h"
#include "core/algorithms/group_advantages.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::ElementsAre;
using ::testing::HasSubstr;

AdvantageInputs inputs() {
  AdvantageInputs in;
  in.token_level_rewards = mat({{0, 0, 1}, {0, 0.5, 0}, {0, 2, 0}, {0, 0, 0}});
  in.response_mask = mask({{1, 1, 1}, {1, 1, 0}, {1, 1, 1}, {1, 0, 0}});
  in.values = mat({{0.1, 0.2, 0.3}, {0.5, 0.4, 0}, {1, 1, 1}, {0, 0, 0}});
  in.group_index = ids({0, 0, 1, 1});
  in.baseline_scores = vec({0.5, 0.5, 1, 1});
  return in;
}

TEST(AdvantageEstimator, EachNameRunsItsEstimatorWithTheOptions) {
  AdvantageInputs in = inputs();
  const torch::Tensor& r = in.token_level_rewards;
  const torch::Tensor& m = in.response_mask;
  AdvantageOptions o{.gamma = 0.9, .lambda = 0.7, .whiten_gae = false, .grpo_epsilon = 0.5};
  auto run = [&](std::string_view name) {
    return compute_advantages(parse_advantage_estimator(name), in, o);
  };
  expect_same(run("gae").advantages,
              gae_advantage(r, in.values, m, {.gamma = 0.9, .lambda = 0.7, .whiten = false}).advantages);
  expect_same(run("grpo").advantages, grpo_advantage(r, m, in.group_index, {.epsilon = 0.5}).advantages);
  expect_same(run("dr_grpo").advantages, dr_grpo_advantage(r, m, in.group_index).advantages);
  expect_same(run("rloo").advantages, rloo_advantage(r, m, in.group_index).advantages);
  expect_same(run("remax").advantages, remax_advantage(r, in.baseline_scores, m).advantages);
  expect_same(run("reinforce_plus_plus").advantages, reinforce_pp_advantage(r, m, 0.9).advantages);
  expect_same(run("reinforce_plus_plus_baseline").advantages,
              reinforce_pp_baseline_advantage(r, m, in.group_index).advantages);
  // And the estimators differ from each other on this batch.
  EXPECT_FALSE(torch::equal(run("grpo").advantages, run("rloo").advantages));
}

TEST(AdvantageEstimator, NamesRoundTripAndUnknownNamesListTheKnownOnes) {
  for (std::string_view name :
       {"gae", "grpo", "dr_grpo", "rloo", "remax", "reinforce_plus_plus", "reinforce_plus_plus_baseline"}) {
    EXPECT_EQ(to_string(parse_advantage_estimator(name)), name);
  }
  try {
    parse_advantage_estimator("ppo");
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'ppo'"));
    EXPECT_THAT(e.what(), HasSubstr("gae"));
    EXPECT_THAT(e.what(), HasSubstr("reinforce_plus_plus_baseline"));
  }
}

TEST(AdvantageEstimator, RequiredInputsAreListedAndMissingOnesNamed) {
  EXPECT_THAT(required_inputs(AdvantageEstimator::kGae), ElementsAre("values"));
  EXPECT_THAT(required_inputs(AdvantageEstimator::kRloo), ElementsAre("group_index"));
  EXPECT_THAT(required_inputs(AdvantageEstimator::kRemax), ElementsAre("baseline_scores"));
  EXPECT_TRUE(required_inputs(AdvantageEstimator::kReinforcePlusPlus).empty());

  struct Case {
    AdvantageEstimator estimator;
    torch::Tensor AdvantageInputs::*field;
    const char* name;
  };
  for (const Case& c :
       {Case{AdvantageEstimator::kGae, &AdvantageInputs::values, "'values'"},
        Case{AdvantageEstimator::kGrpo, &AdvantageInputs::group_index, "'group_index'"},
        Case{AdvantageEstimator::kReinforcePlusPlusBaseline, &AdvantageInputs::group_index, "'group_index'"},
        Case{AdvantageEstimator::kRemax, &AdvantageInputs::baseline_scores, "'baseline_scores'"}}) {
    AdvantageInputs in = inputs();
    in.*c.field = torch::Tensor();
    try {
      compute_advantages(c.estimator, in);
      FAIL() << "expected AlgorithmError for " << to_string(c.estimator);
    } catch (const AlgorithmError& e) {
      EXPECT_THAT(e.what(), HasSubstr(c.name));
      EXPECT_THAT(e.what(), HasSubstr(std::string(to_string(c.estimator))));
    }
  }
  // An estimator that does not need an input does not ask for it.
  AdvantageInputs bare;
  bare.token_level_rewards = inputs().token_level_rewards;
  bare.response_mask = inputs().response_mask;
  EXPECT_NO_THROW(compute_advantages(AdvantageEstimator::kReinforcePlusPlus, bare));
}

}  // namespace
}  // namespace rlwb::core::algorithms
