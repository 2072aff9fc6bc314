// Clipped value loss and explained variance on a hand-computed batch.
#include "core/algorithms/value_loss.h"

#include <gtest/gtest.h>

#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers

// clip_range_value 0.5:
//   (0,0) V 1,   V_old 0,   R 0.8: V_clip 0.5; (0.2)^2 = 0.04 < (0.3)^2 = 0.09 -> 0.09, clipped
//   (0,1) V 2,   V_old 2.2, R 1:   V_clip = V;  both 1                          -> 1
//   (0,2) V 1.5, V_old 0.1, R 1:   V_clip 0.6;  0.25 > 0.16                     -> 0.25
//   (1,0) V 0.5, V_old 0.5, R 2:   V_clip = V;  both 2.25                       -> 2.25
//   (1,1), (1,2) padding.
torch::Tensor values() { return mat({{1, 2, 1.5}, {0.5, kNaN, kInf}}); }
torch::Tensor old_values() { return mat({{0, 2.2, 0.1}, {0.5, kNaN, 0}}); }
torch::Tensor returns() { return mat({{0.8, 1, 1}, {2, -kInf, 3}}); }
torch::Tensor valid() { return mask({{1, 1, 1}, {1, 0, 0}}); }

TEST(ValueLoss, MatchesHandComputedLossAndClipfrac) {
  ValueLoss out = value_loss(values(), old_values(), returns(), valid());
  // 0.5 * (0.09 + 1 + 0.25 + 2.25) / 4
  expect_near(out.loss, 0.44875);
  expect_near(out.clipfrac, 0.25);
  Metrics m = out.metrics();
  EXPECT_NEAR(m.at("critic/vf_loss"), 0.44875, 1e-6);
  EXPECT_NEAR(m.at("critic/vf_clipfrac"), 0.25, 1e-6);
}

TEST(ValueLoss, GradientStopsWhereTheClippedTermWins) {
  torch::Tensor v = values().requires_grad_();
  value_loss(v, old_values(), returns(), valid()).loss.backward();
  // 0.5 / 4 * 2 (V - R) where unclipped, 0 at (0,0) (clamped) and padding.
  expect_near(v.grad(), mat({{0, 0.25, 0.125}, {-0.375, 0, 0}}));
}

TEST(ValueLoss, WithoutClippingIsHalfMeanSquaredError) {
  ValueLoss out = value_loss(values(), old_values(), returns(), valid(), {.clip_range_value = std::nullopt});
  expect_near(out.loss, 0.5 * (0.04 + 1 + 0.25 + 2.25) / 4);
  expect_near(out.clipfrac, 0.0);
}

TEST(ValueLoss, AggregationModeIsApplied) {
  ValueLoss out = value_loss(values(), old_values(), returns(), valid(),
                             {.aggregation = {LossAggMode::kSeqMeanTokenMean}});
  // row means 1.34 / 3 and 2.25, averaged, halved
  expect_near(out.loss, 0.5 * (1.34 / 3 + 2.25) / 2);
}

TEST(ValueLoss, PaddingNeverContributes) {
  ValueLoss dirty = value_loss(values(), old_values(), returns(), valid());
  ValueLoss clean = value_loss(fill_padding(values(), valid(), 0), fill_padding(old_values(), valid(), 0),
                               fill_padding(returns(), valid(), 0), valid());
  expect_same(dirty.loss, clean.loss);
  expect_same(dirty.clipfrac, clean.clipfrac);
  torch::Tensor v = values().requires_grad_();
  value_loss(v, old_values(), returns(), valid()).loss.backward();
  EXPECT_TRUE(torch::isfinite(v.grad()).all().item<bool>());
}

TEST(ValueLoss, RejectsBadInput) {
  EXPECT_THROW(value_loss(values(), old_values(), returns(), valid(), {.clip_range_value = -1}),
               AlgorithmError);
  EXPECT_THROW(value_loss(values(), old_values().slice(0, 0, 1), returns(), valid()), AlgorithmError);
}

TEST(ExplainedVariance, MatchesReferenceAndPerfectCritic) {
  // R 0.8 1 1 2, V 1 2 1.5 0.5 (reference_values.py)
  expect_near(explained_variance(returns(), values(), valid()), -3.01122689, 1e-5);
  // A critic that predicts the returns exactly explains all the variance.
  expect_near(explained_variance(returns(), returns(), valid()), 1.0, 1e-6);
  // One that predicts the mean explains none (up to the 1e-5 guard).
  torch::Tensor mean_only = torch::full({2, 3}, 1.2);
  expect_near(explained_variance(returns(), mean_only, valid()), 0.0, 1e-4);
}

}  // namespace
}  // namespace rlwb::core::algorithms
