// Clipped policy loss with asymmetric and dual clip: loss, metrics and
// gradients on a hand-computed batch; padding; option checks.
#include "core/algorithms/policy_loss.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::HasSubstr;

// Ratios r = exp(log_prob - old_log_prob) chosen to hit every case, with
// clip_low 0.2, clip_high 0.28 (ratio range [0.8, 1.28]) and clip_ratio_c 3:
//   (0,0) r 1.5, A +1: clipped at 1.28        L = -1.28  pg_clipfrac
//   (0,1) r 0.5, A +1: below range, unclipped L = -0.5   (PPO keeps -A r)
//   (0,2) r 1.1, A -1: in range               L = 1.1
//   (1,0) r 0.7, A -1: clipped at 0.8         L = 0.8    pg_clipfrac
//   (1,1) r 4.0, A -1: dual clip at c = 3     L = 3      pg_clipfrac_lower
//   (1,2) padding.
torch::Tensor old_log_prob() { return mat({{-1, -2, -0.5}, {-1, -3, kNaN}}); }
torch::Tensor log_prob() {
  return old_log_prob() +
         mat({{std::log(1.5), std::log(0.5), std::log(1.1)}, {std::log(0.7), std::log(4.0), kNaN}});
}
torch::Tensor advantages() { return mat({{1, 1, -1}, {-1, -1, kInf}}); }
torch::Tensor valid() { return mask({{1, 1, 1}, {1, 1, 0}}); }
const PolicyLossOptions kOptions{.clip_low = 0.2, .clip_high = 0.28, .clip_ratio_c = 3.0};

TEST(PolicyLoss, MatchesHandComputedLossAndMetrics) {
  PolicyLoss out = policy_loss(old_log_prob(), log_prob(), advantages(), valid(), kOptions);
  // token-mean of -1.28 -0.5 1.1 0.8 3
  expect_near(out.loss, 3.12 / 5);
  expect_near(out.clipfrac, 2.0 / 5);
  expect_near(out.clipfrac_lower, 1.0 / 5);
  // mean of -log r (reference_values.py)
  expect_near(out.ppo_kl, -0.167449505);
  Metrics m = out.metrics();
  EXPECT_NEAR(m.at("actor/pg_loss"), 0.624, 1e-5);
  EXPECT_NEAR(m.at("actor/pg_clipfrac"), 0.4, 1e-6);
  EXPECT_NEAR(m.at("actor/ppo_kl"), -0.167449505, 1e-5);
  EXPECT_NEAR(m.at("actor/pg_clipfrac_lower"), 0.2, 1e-6);
}

TEST(PolicyLoss, GradientIsZeroWhereClippedAndMinusARatioElsewhere) {
  torch::Tensor lp = log_prob().requires_grad_();
  policy_loss(old_log_prob(), lp, advantages(), valid(), kOptions).loss.backward();
  // dL/dlog_prob = -A r / 5 where the unclipped term is used.
  expect_near(lp.grad(), mat({{0, -0.5 / 5, 1.1 / 5}, {0, 0, 0}}));
}

TEST(PolicyLoss, WithoutDualClipLargeRatiosAreUnbounded) {
  PolicyLossOptions o = kOptions;
  o.clip_ratio_c = std::nullopt;
  PolicyLoss out = policy_loss(old_log_prob(), log_prob(), advantages(), valid(), o);
  expect_near(out.loss, 4.12 / 5);  // (1,1) contributes 4 instead of 3
  expect_near(out.clipfrac_lower, 0.0);
  torch::Tensor lp = log_prob().requires_grad_();
  policy_loss(old_log_prob(), lp, advantages(), valid(), o).loss.backward();
  expect_near(lp.grad()[1], vec({0, 4.0 / 5, 0}));
}

TEST(PolicyLoss, AsymmetricClipUsesEachBound) {
  // Symmetric 0.2: (0,0) is clipped at 1.2 instead of 1.28.
  PolicyLoss sym =
      policy_loss(old_log_prob(), log_prob(), advantages(), valid(), {.clip_low = 0.2, .clip_high = 0.2});
  expect_near(sym.loss, (-1.2 - 0.5 + 1.1 + 0.8 + 3) / 5);
  // clip_low 0.4: (1,0) r 0.7 is now inside [0.6, 1.28] and unclipped.
  PolicyLoss wide =
      policy_loss(old_log_prob(), log_prob(), advantages(), valid(), {.clip_low = 0.4, .clip_high = 0.28});
  expect_near(wide.loss, (-1.28 - 0.5 + 1.1 + 0.7 + 3) / 5);
  expect_near(wide.clipfrac, 1.0 / 5);
}

TEST(PolicyLoss, OnPolicyLossIsMinusMeanAdvantage) {
  // r = 1 everywhere: nothing clipped, loss = -mean(A), no KL.
  PolicyLoss out = policy_loss(old_log_prob(), old_log_prob(), advantages(), valid(), kOptions);
  expect_near(out.loss, -(1 + 1 - 1 - 1 - 1) / 5.0);
  expect_near(out.clipfrac, 0.0);
  expect_near(out.ppo_kl, 0.0);
}

TEST(PolicyLoss, AggregationModeIsApplied) {
  PolicyLossOptions o = kOptions;
  o.aggregation = {LossAggMode::kSeqMeanTokenSum};
  PolicyLoss out = policy_loss(old_log_prob(), log_prob(), advantages(), valid(), o);
  // row sums -0.68 and 3.8, averaged over 2 rows
  expect_near(out.loss, (-0.68 + 3.8) / 2);
}

TEST(PolicyLoss, PaddingNeverContributesToLossMetricsOrGradient) {
  torch::Tensor lp_dirty = log_prob().requires_grad_();
  PolicyLoss dirty = policy_loss(old_log_prob(), lp_dirty, advantages(), valid(), kOptions);
  dirty.loss.backward();
  torch::Tensor lp_clean = fill_padding(log_prob(), valid(), 0).requires_grad_();
  PolicyLoss clean = policy_loss(fill_padding(old_log_prob(), valid(), 0), lp_clean,
                                 fill_padding(advantages(), valid(), 0), valid(), kOptions);
  clean.loss.backward();
  expect_same(dirty.loss.detach(), clean.loss.detach());
  expect_same(dirty.clipfrac, clean.clipfrac);
  expect_same(dirty.ppo_kl, clean.ppo_kl);
  expect_same(dirty.clipfrac_lower, clean.clipfrac_lower);
  expect_same(lp_dirty.grad(), lp_clean.grad());  // finite, and 0 at the padding
  EXPECT_EQ(lp_dirty.grad()[1][2].item<double>(), 0.0);
}

TEST(PolicyLoss, EmptyMaskGivesZeroLossAndMetrics) {
  torch::Tensor lp = log_prob().requires_grad_();
  PolicyLoss out = policy_loss(old_log_prob(), lp, advantages(), mask({{0, 0, 0}, {0, 0, 0}}), kOptions);
  out.loss.backward();
  EXPECT_EQ(out.loss.item<double>(), 0.0);
  EXPECT_EQ(out.clipfrac.item<double>(), 0.0);
  EXPECT_EQ(out.ppo_kl.item<double>(), 0.0);
  expect_same(lp.grad(), torch::zeros_like(lp));
}

TEST(PolicyLoss, RejectsBadOptionsAndShapes) {
  auto run = [](const PolicyLossOptions& o) {
    policy_loss(old_log_prob(), log_prob(), advantages(), valid(), o);
  };
  try {
    run({.clip_ratio_c = 1.0});
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("clip_ratio_c must be > 1"));
  }
  EXPECT_THROW(run({.clip_low = 1.0}), AlgorithmError);
  EXPECT_THROW(run({.clip_high = -0.1}), AlgorithmError);
  EXPECT_THROW(policy_loss(old_log_prob(), log_prob(), advantages().slice(1, 0, 2), valid()), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
