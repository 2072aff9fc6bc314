// Safe-RLHF: the Lagrange multiplier update (both step kinds, with and
// without the proportional term) and the combined advantage.
#include "core/algorithms/safe_rlhf.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers

TEST(LagrangeMultiplier, LogLambdaStepMatchesHandComputedValues) {
  LagrangeMultiplier lambda({.lambda_init = 1.0, .lr = 0.5, .cost_threshold = 0.2});
  // Cost 0.6 > 0.2: log lambda = 0 + 0.5 * 0.4 = 0.2.
  EXPECT_NEAR(lambda.update(0.6), 1.22140276, 1e-8);
  // Cost 0 < 0.2: log lambda = 0.2 - 0.5 * 0.2 = 0.1.
  EXPECT_NEAR(lambda.update(0.0), 1.10517092, 1e-8);
  EXPECT_NEAR(lambda.value(), 1.10517092, 1e-8);
  Metrics m = lambda.metrics();
  EXPECT_NEAR(m.at("safe_rlhf/lambda"), 1.10517092, 1e-8);
  EXPECT_EQ(m.at("safe_rlhf/episode_cost"), 0.0);
  EXPECT_NEAR(m.at("safe_rlhf/cost_violation"), -0.2, 1e-12);
}

TEST(LagrangeMultiplier, LambdaStepIsProjectedAtZero) {
  LagrangeMultiplier lambda(
      {.lambda_init = 0.1, .lr = 0.5, .cost_threshold = 0.2, .step = LagrangeStep::kLambda});
  EXPECT_NEAR(lambda.update(0.0), 0.0, 1e-12);  // 0.1 - 0.1
  EXPECT_EQ(lambda.update(0.0), 0.0);           // stays at 0, not -0.1
  EXPECT_NEAR(lambda.update(1.2), 0.5, 1e-12);  // 0 + 0.5 * 1.0
}

TEST(LagrangeMultiplier, LambdaMaxCapsBothSteps) {
  LagrangeMultiplier log_step({.lambda_init = 1.0, .lr = 0.5, .lambda_max = 1.1});
  EXPECT_DOUBLE_EQ(log_step.update(0.6), 1.1);
  // The cap is a wall, not a memory: one step below moves lambda down at once.
  EXPECT_NEAR(log_step.update(-0.2), 1.1 * std::exp(-0.1), 1e-12);
  LagrangeMultiplier plain({.lambda_init = 1.0, .lr = 0.5, .lambda_max = 1.1, .step = LagrangeStep::kLambda});
  EXPECT_EQ(plain.update(10.0), 1.1);
}

TEST(LagrangeMultiplier, SettlesWhereTheConstraintIsTight) {
  // A policy whose mean cost falls as lambda rises: J_c = 1 / (1 + lambda).
  // With threshold 0.25 the constraint is tight at lambda = 3.
  for (LagrangeStep step : {LagrangeStep::kLogLambda, LagrangeStep::kLambda}) {
    LagrangeMultiplier lambda({.lambda_init = 0.5, .lr = 1.0, .cost_threshold = 0.25, .step = step});
    for (int i = 0; i < 2000; ++i) lambda.update(1.0 / (1.0 + lambda.value()));
    EXPECT_NEAR(lambda.value(), 3.0, 1e-3);
  }
}

TEST(LagrangeMultiplier, LogLambdaRecoversAfterLongSatisfiedStretches) {
  // Far below the threshold for a long time lambda becomes tiny, but the
  // next violation still raises it at the same rate.
  LagrangeMultiplier lambda({.lambda_init = 1.0, .lr = 1.0, .cost_threshold = 0.0});
  for (int i = 0; i < 1000; ++i) lambda.update(-1.0);
  EXPECT_LT(lambda.value(), 1e-300);
  for (int i = 0; i < 1000; ++i) lambda.update(1.0);
  EXPECT_NEAR(lambda.value(), 1.0, 1e-9);
}

TEST(LagrangeMultiplier, TheProportionalTermAnswersAViolationInTheStepThatShowsIt) {
  LagrangeMultiplier lambda(
      {.lambda_init = 0.5, .lr = 1.0, .cost_threshold = 0.1, .lambda_max = 2.0, .kp = 5.0});
  EXPECT_DOUBLE_EQ(lambda.applied(0.3), 0.5 + 5.0 * 0.2);
  EXPECT_DOUBLE_EQ(lambda.applied(0.05), 0.5) << "under the threshold: the integral term alone";
  EXPECT_DOUBLE_EQ(lambda.applied(0.9), 2.0) << "capped at lambda_max";
  EXPECT_DOUBLE_EQ(lambda.value(), 0.5) << "applied() changes nothing";
  LagrangeMultiplier plain({.lambda_init = 0.5, .lr = 1.0, .cost_threshold = 0.1});
  EXPECT_DOUBLE_EQ(plain.applied(0.3), 0.5) << "kp = 0: the plain ascent";
  EXPECT_THROW(LagrangeMultiplier({.kp = -1.0}), AlgorithmError);
  EXPECT_THROW((void)lambda.applied(std::nan("")), AlgorithmError);
}

// A policy whose cost drifts up by 0.02 a step unless the applied
// multiplier pushes it down (by 0.04 lambda): the plain ascent lets lambda
// decay while the cost is under the threshold and then overshoots by about
// as much again as the threshold; with the proportional term the cost
// stays within two hundredths of it (either step kind).
TEST(LagrangeMultiplier, PiControlCutsTheOvershootOfThePlainAscent) {
  for (LagrangeStep step : {LagrangeStep::kLogLambda, LagrangeStep::kLambda}) {
    auto peak_violation = [step](double kp) {
      LagrangeMultiplier lambda(
          {.lambda_init = 0.5, .lr = 1.0, .cost_threshold = 0.1, .lambda_max = 20.0, .kp = kp, .step = step});
      double cost = 0, peak = 0;
      for (int step = 0; step < 300; ++step) {
        const double applied = lambda.applied(cost);
        lambda.update(cost);
        cost = std::clamp(cost + 0.02 - 0.04 * applied, 0.0, 1.0);
        if (step >= 50) peak = std::max(peak, cost - 0.1);
      }
      return peak;
    };
    const double plain = peak_violation(0.0), pi = peak_violation(10.0);
    EXPECT_GT(plain, 0.1);
    EXPECT_LT(pi, 0.02);
  }
}

TEST(LagrangeMultiplier, RejectsBadOptionsAndCosts) {
  EXPECT_THROW(LagrangeMultiplier({.lambda_init = 0.0}), AlgorithmError);
  EXPECT_NO_THROW(LagrangeMultiplier({.lambda_init = 0.0, .step = LagrangeStep::kLambda}));
  EXPECT_THROW(LagrangeMultiplier({.lr = 0.0}), AlgorithmError);
  EXPECT_THROW(LagrangeMultiplier({.lambda_max = 0.0}), AlgorithmError);
  LagrangeMultiplier lambda;
  EXPECT_THROW(lambda.update(std::nan("")), AlgorithmError);
}

TEST(SafeRlhfAdvantage, CombinesRewardAndCostAdvantages) {
  torch::Tensor a_r = mat({{1, -2, kNaN}});
  torch::Tensor a_c = mat({{0.5, 1, kInf}});
  torch::Tensor valid = mask({{1, 1, 0}});
  // lambda 0.5: (1 - 0.25) / 1.5 = 0.5, (-2 - 0.5) / 1.5 = -5/3
  expect_near(safe_rlhf_advantage(a_r, a_c, valid, 0.5), mat({{0.5, -5.0 / 3, 0}}));
  // lambda 0: the reward advantage alone.
  expect_near(safe_rlhf_advantage(a_r, a_c, valid, 0.0), mat({{1, -2, 0}}));
  // Very large lambda: nearly minus the cost advantage.
  expect_near(safe_rlhf_advantage(a_r, a_c, valid, 1e6), mat({{-0.5, -1, 0}}), 1e-5);
  EXPECT_THROW(safe_rlhf_advantage(a_r, a_c, valid, -1), AlgorithmError);
  EXPECT_THROW(safe_rlhf_advantage(a_r, a_c.slice(1, 0, 2), valid, 1), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
