// KL estimators, KL in the reward and KL as a loss term, on hand-computed
// log-probs.
#include "core/algorithms/kl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/algorithms/masked_ops.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::HasSubstr;

// log r = log_prob - ref_log_prob: row 0: 0.5, -1, 0; row 1: 0.2 then padding.
torch::Tensor log_prob() { return mat({{-1, -2, -0.5}, {-0.2, kNaN, -kInf}}); }
torch::Tensor ref_log_prob() { return mat({{-1.5, -1, -0.5}, {-0.4, -1, kNaN}}); }
torch::Tensor valid() { return mask({{1, 1, 1}, {1, 0, 0}}); }

torch::Tensor penalty(KlEstimator e) { return kl_penalty(log_prob(), ref_log_prob(), valid(), e); }

TEST(KlPenalty, EstimatorsMatchTheirFormulas) {
  expect_near(penalty(KlEstimator::kK1), mat({{0.5, -1, 0}, {0.2, 0, 0}}));
  // 0.5 (log r)^2
  expect_near(penalty(KlEstimator::kK2), mat({{0.125, 0.5, 0}, {0.02, 0, 0}}));
  // exp(-log r) - 1 + log r (reference_values.py)
  expect_near(penalty(KlEstimator::kK3), mat({{0.10653066, 0.718281828, 0}, {0.0187307531, 0, 0}}));
  expect_near(penalty(KlEstimator::kAbs), mat({{0.5, 1, 0}, {0.2, 0, 0}}));
}

TEST(KlPenalty, K3IsNonNegativeAndClamped) {
  torch::Tensor lp = mat({{30, -30, 1e-3, 0}});
  torch::Tensor ref = torch::zeros({1, 4});
  torch::Tensor k3 = kl_penalty(lp, ref, mask({{1, 1, 1, 1}}), KlEstimator::kK3);
  // log r = 30 -> clamped to 20 -> 19.0 -> capped at 10; log r = -30 -> e^20 -> 10.
  EXPECT_NEAR(k3[0][0].item<double>(), 10.0, 1e-6);
  EXPECT_NEAR(k3[0][1].item<double>(), 10.0, 1e-6);
  EXPECT_GE(k3[0][2].item<double>(), 0.0);
  EXPECT_EQ(k3[0][3].item<double>(), 0.0);
}

TEST(KlPenalty, GradientFlowsToLogProbOnly) {
  torch::Tensor lp = log_prob().requires_grad_();
  torch::Tensor ref = ref_log_prob().requires_grad_();
  kl_penalty(lp, ref, valid(), KlEstimator::kK2).sum().backward();
  // d/dlog_prob of 0.5 (log r)^2 = log r
  expect_near(lp.grad(), mat({{0.5, -1, 0}, {0.2, 0, 0}}));
  EXPECT_FALSE(ref.grad().defined() && ref.grad().ne(0).any().item<bool>());
}

TEST(KlPenalty, PaddingNeverContributes) {
  for (KlEstimator e : {KlEstimator::kK1, KlEstimator::kK2, KlEstimator::kK3, KlEstimator::kAbs}) {
    torch::Tensor clean = kl_penalty(fill_padding(log_prob(), valid(), 0),
                                     fill_padding(ref_log_prob(), valid(), 0), valid(), e);
    expect_same(penalty(e), clean);
  }
}

TEST(KlInReward, SubtractsBetaTimesKlFromTokenScores) {
  // Scores 1 (row 0) and 0.5 (row 1) on the last valid token; beta 0.1, k1.
  torch::Tensor scores = place_score_at_last_token(vec({1, 0.5}), valid());
  KlInReward out = apply_kl_in_reward(scores, log_prob(), ref_log_prob(), valid(), 0.1, KlEstimator::kK1);
  expect_near(out.token_level_rewards, mat({{-0.05, 0.1, 1}, {0.48, 0, 0}}));
  expect_near(out.kl, mat({{0.5, -1, 0}, {0.2, 0, 0}}));
  // mean over rows of the row means: (-0.5 / 3 + 0.2) / 2
  EXPECT_NEAR(out.current_kl, (-0.5 / 3 + 0.2) / 2, 1e-6);
  Metrics m = out.metrics();
  EXPECT_NEAR(m.at("actor/reward_kl_penalty"), out.current_kl, 1e-12);
  EXPECT_EQ(m.at("actor/reward_kl_penalty_coeff"), 0.1);
}

TEST(KlInReward, K3MatchesReference) {
  torch::Tensor scores = place_score_at_last_token(vec({1, 0.5}), valid());
  KlInReward out = apply_kl_in_reward(scores, log_prob(), ref_log_prob(), valid(), 0.1, KlEstimator::kK3);
  expect_near(out.token_level_rewards, mat({{-0.010653066, -0.0718281828, 1}, {0.498126925, 0, 0}}));
  EXPECT_NEAR(out.current_kl, 0.146834125, 1e-6);
}

TEST(KlInReward, EmptyRowsAreLeftOutOfCurrentKl) {
  torch::Tensor lp = torch::cat({log_prob(), mat({{5, 5, 5}})});
  torch::Tensor ref = torch::cat({ref_log_prob(), mat({{0, 0, 0}})});
  torch::Tensor m = torch::cat({valid(), mask({{0, 0, 0}})});
  KlInReward out = apply_kl_in_reward(torch::zeros({3, 3}), lp, ref, m, 0.1);
  EXPECT_NEAR(out.current_kl, (-0.5 / 3 + 0.2) / 2, 1e-6);
  expect_same(out.token_level_rewards[2], torch::zeros({3}));
}

TEST(KlInReward, ZeroBetaLeavesScoresUnchanged) {
  torch::Tensor scores = place_score_at_last_token(vec({1, 0.5}), valid());
  KlInReward out = apply_kl_in_reward(scores, log_prob(), ref_log_prob(), valid(), 0.0);
  expect_same(out.token_level_rewards, scores);
}

TEST(KlLoss, AggregatesTheEstimateAndScalesByCoefficient) {
  torch::Tensor lp = log_prob().requires_grad_();
  KlLoss out = kl_loss(lp, ref_log_prob(), valid(), 0.001, KlEstimator::kK3);
  expect_near(out.kl, 0.21088581);  // token-mean of the four k3 values
  expect_near(out.loss, 0.21088581e-3, 1e-8);
  Metrics m = out.metrics();
  EXPECT_NEAR(m.at("actor/kl_loss"), 0.21088581, 1e-6);
  EXPECT_EQ(m.at("actor/kl_coef"), 0.001);
  out.loss.backward();
  // d k3 / d log r = 1 - exp(-log r); / 4 tokens; * 0.001
  torch::Tensor expected =
      mat({{1 - std::exp(-0.5), 1 - std::exp(1.0), 0}, {1 - std::exp(-0.2), 0, 0}}) * (0.001 / 4);
  expect_near(lp.grad(), expected, 1e-8);
}

TEST(KlLoss, SeqMeanAggregation) {
  KlLoss out =
      kl_loss(log_prob(), ref_log_prob(), valid(), 1.0, KlEstimator::kK1, {LossAggMode::kSeqMeanTokenSum});
  expect_near(out.kl, (-0.5 + 0.2) / 2);
}

TEST(KlEstimatorNames, ParsesVerlAliasesAndRejectsOthers) {
  EXPECT_EQ(parse_kl_estimator("k1"), KlEstimator::kK1);
  EXPECT_EQ(parse_kl_estimator("kl"), KlEstimator::kK1);
  EXPECT_EQ(parse_kl_estimator("k2"), KlEstimator::kK2);
  EXPECT_EQ(parse_kl_estimator("mse"), KlEstimator::kK2);
  EXPECT_EQ(parse_kl_estimator("k3"), KlEstimator::kK3);
  EXPECT_EQ(parse_kl_estimator("low_var_kl"), KlEstimator::kK3);
  EXPECT_EQ(parse_kl_estimator("abs"), KlEstimator::kAbs);
  EXPECT_EQ(to_string(KlEstimator::kK3), "k3");
  try {
    parse_kl_estimator("k4");
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'k4'"));
    EXPECT_THAT(e.what(), HasSubstr("low_var_kl"));
  }
  EXPECT_THROW(apply_kl_in_reward(torch::zeros({2, 3}), log_prob(), ref_log_prob(), valid(), -1),
               AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
