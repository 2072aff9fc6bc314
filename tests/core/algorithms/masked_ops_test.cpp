// Masked reductions and score placement: hand-computed values, padding that
// is never read, empty rows.
#include "core/algorithms/masked_ops.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::HasSubstr;

// Valid entries 1 2 3 | 4 5; the rest is padding.
torch::Tensor values() { return mat({{1, 2, 3, 100}, {4, 5, 200, 300}}); }
torch::Tensor valid() { return mask({{1, 1, 1, 0}, {1, 1, 0, 0}}); }

TEST(MaskedOps, SumMeanVarOverAllValidEntries) {
  expect_near(masked_sum(values(), valid()), 15.0);
  expect_near(masked_mean(values(), valid()), 3.0);
  // deviations -2 -1 0 1 2: sum of squares 10, / (5 - 1)
  expect_near(masked_var(values(), valid()), 2.5);
  expect_near(masked_var(values(), valid(), std::nullopt, /*unbiased=*/false), 2.0);
}

TEST(MaskedOps, PerRowReductions) {
  expect_near(masked_sum(values(), valid(), 1), vec({6, 9}));
  expect_near(masked_mean(values(), valid(), 1), vec({2, 4.5}));
  // row 0: 1 2 3 -> 2 / 2; row 1: 4 5 -> 0.5 / 1
  expect_near(masked_var(values(), valid(), 1), vec({1, 0.5}));
  // over columns: column 0 holds 1 and 4, column 2 only 3, column 3 nothing
  expect_near(masked_mean(values(), valid(), 0), vec({2.5, 3.5, 3, 0}));
}

TEST(MaskedOps, PaddingIsNeverRead) {
  for (double fill : {kNaN, kInf, -kInf, 1e30}) {
    torch::Tensor dirty = fill_padding(values(), valid(), fill);
    expect_same(masked_sum(dirty, valid()), masked_sum(values(), valid()));
    expect_same(masked_mean(dirty, valid(), 1), masked_mean(values(), valid(), 1));
    expect_same(masked_var(dirty, valid()), masked_var(values(), valid()));
    expect_same(masked_whiten(dirty, valid()), masked_whiten(values(), valid()));
  }
}

TEST(MaskedOps, NoGradientReachesPadding) {
  torch::Tensor x = fill_padding(values(), valid(), kNaN).requires_grad_();
  masked_whiten(x, valid()).square().sum().backward();
  torch::Tensor grad = x.grad();
  EXPECT_TRUE(torch::isfinite(grad).all().item<bool>()) << grad;
  EXPECT_TRUE(grad.masked_select(valid().logical_not()).eq(0).all().item<bool>()) << grad;
}

TEST(MaskedOps, EmptySelectionIsZeroNotNaN) {
  torch::Tensor none = mask({{0, 0}, {0, 0}});
  torch::Tensor x = mat({{kNaN, 1}, {2, 3}});
  expect_near(masked_mean(x, none), 0.0);
  expect_near(masked_var(x, none), 0.0);
  expect_near(masked_whiten(x, none), mat({{0, 0}, {0, 0}}));
  // An empty row in an otherwise valid batch.
  expect_near(masked_mean(mat({{1, 2}, {9, 9}}), mask({{1, 1}, {0, 0}}), 1), vec({1.5, 0}));
}

TEST(MaskedOps, VarianceOfOneSampleIsZero) {
  torch::Tensor one = mask({{0, 1, 0}});
  expect_near(masked_var(mat({{5, 7, 9}}), one), 0.0);
  // Whitening a single value: it equals the mean, so 0.
  expect_near(masked_whiten(mat({{5, 7, 9}}), one), mat({{0, 0, 0}}));
}

TEST(MaskedOps, WhitenMatchesHandComputedValues) {
  // mean 3, unbiased var 2.5 (reference_values.py)
  expect_near(masked_whiten(values(), valid()),
              mat({{-1.26491106, -0.632455531, 0, 0}, {0.632455531, 1.26491106, 0, 0}}));
  // shift_mean = false keeps the mean: (x - 3) / sqrt(2.5) + 3
  expect_near(masked_whiten(values(), valid(), /*shift_mean=*/false),
              mat({{1.73508894, 2.36754447, 3, 0}, {3.63245553, 4.26491106, 0, 0}}));
}

TEST(MaskedOps, AcceptsFloatAndIntegerMasks) {
  torch::Tensor f = valid().to(torch::kFloat32);
  torch::Tensor i = valid().to(torch::kInt64);
  expect_near(masked_mean(values(), f), 3.0);
  expect_near(masked_mean(values(), i), 3.0);
}

TEST(MaskedOps, MaskWithWrongShapeIsAnError) {
  try {
    masked_mean(values(), mask({{1, 1, 1}}));
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("masked_mean"));
    EXPECT_THAT(e.what(), HasSubstr("[1, 3]"));
    EXPECT_THAT(e.what(), HasSubstr("[2, 4]"));
  }
}

TEST(LastValidIndex, FindsLastValidPositionOrMinusOne) {
  torch::Tensor m = mask({{1, 1, 0}, {0, 0, 0}, {1, 0, 1}, {0, 1, 0}});
  EXPECT_EQ(values_of(last_valid_index(m)), (std::vector<double>{1, -1, 2, 1}));
}

TEST(PlaceScoreAtLastToken, PutsEachScoreOnItsRowsLastValidToken) {
  torch::Tensor m = mask({{1, 1, 0}, {0, 0, 0}, {1, 0, 1}});
  torch::Tensor placed = place_score_at_last_token(vec({0.5, kNaN, -1}), m);
  // The empty row's score (NaN here) is dropped, not spread.
  expect_same(placed, mat({{0, 0.5, 0}, {0, 0, 0}, {0, 0, -1}}));
}

TEST(PlaceScoreAtLastToken, ScoresMustHaveOnePerRow) {
  EXPECT_THROW(place_score_at_last_token(vec({1, 2}), mask({{1}, {1}, {1}})), AlgorithmError);
  EXPECT_THROW(place_score_at_last_token(mat({{1}, {2}}), mask({{1}, {1}})), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
