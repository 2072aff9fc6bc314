// Loss aggregation modes on a hand-computed batch: a 3-token row, a 1-token
// row and an empty row.
#include "core/algorithms/loss_aggregation.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::HasSubstr;

// Row sums 6 and 4, row means 2 and 4; row 2 has no valid token.
torch::Tensor losses() { return mat({{1, 2, 3, kNaN}, {4, kNaN, kNaN, kNaN}, {kNaN, 7, 7, 7}}); }
torch::Tensor valid() { return mask({{1, 1, 1, 0}, {1, 0, 0, 0}, {0, 0, 0, 0}}); }

double aggregate(LossAggMode mode, std::optional<double> normalizer = std::nullopt,
                 std::optional<double> norm_length = std::nullopt) {
  return aggregate_loss(losses(), valid(), {mode, normalizer, norm_length}).item<double>();
}

TEST(LossAggregation, TokenMeanAveragesAllValidTokens) {
  EXPECT_NEAR(aggregate(LossAggMode::kTokenMean), (1 + 2 + 3 + 4) / 4.0, 1e-6);
}

TEST(LossAggregation, SeqMeanTokenSumAveragesRowSumsOverNonEmptyRows) {
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenSum), (6 + 4) / 2.0, 1e-6);
}

TEST(LossAggregation, SeqMeanTokenMeanAveragesRowMeansOverNonEmptyRows) {
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenMean), (2 + 4) / 2.0, 1e-6);
}

TEST(LossAggregation, SeqMeanTokenSumNormDividesByAConstantLength) {
  // (6 + 4) / 4 (response_len) / 2 rows
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenSumNorm), 1.25, 1e-6);
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenSumNorm, std::nullopt, 2.0), 2.5, 1e-6);
}

TEST(LossAggregation, NormalizerReplacesTheOwnCount) {
  EXPECT_NEAR(aggregate(LossAggMode::kTokenMean, 10.0), 1.0, 1e-6);
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenSum, 5.0), 2.0, 1e-6);
  EXPECT_NEAR(aggregate(LossAggMode::kSeqMeanTokenMean, 3.0), 2.0, 1e-6);
}

TEST(LossAggregation, MicroBatchesWithGlobalNormalizerSumToTheBatchLoss) {
  torch::Tensor loss = losses(), m = valid();
  for (LossAggMode mode :
       {LossAggMode::kTokenMean, LossAggMode::kSeqMeanTokenSum, LossAggMode::kSeqMeanTokenMean}) {
    double whole = aggregate_loss(loss, m, {mode}).item<double>();
    double count = mode == LossAggMode::kTokenMean ? 4.0 : 2.0;
    double parts = 0;
    for (int64_t r = 0; r < 3; ++r) {
      parts += aggregate_loss(loss.slice(0, r, r + 1), m.slice(0, r, r + 1), {mode, count}).item<double>();
    }
    EXPECT_NEAR(parts, whole, 1e-6) << to_string(mode);
  }
}

TEST(LossAggregation, TokenMeanGradientIsMaskOverCount) {
  torch::Tensor x = losses().requires_grad_();
  aggregate_loss(x, valid(), {LossAggMode::kTokenMean}).backward();
  expect_same(x.grad(), mat({{0.25, 0.25, 0.25, 0}, {0.25, 0, 0, 0}, {0, 0, 0, 0}}));
}

TEST(LossAggregation, SeqMeanTokenMeanWeighsEachRowEqually) {
  torch::Tensor x = losses().requires_grad_();
  aggregate_loss(x, valid(), {LossAggMode::kSeqMeanTokenMean}).backward();
  // row 0: 1/2 * 1/3 per token, row 1: 1/2 * 1/1
  expect_near(x.grad(), mat({{1 / 6.0, 1 / 6.0, 1 / 6.0, 0}, {0.5, 0, 0, 0}, {0, 0, 0, 0}}));
}

TEST(LossAggregation, PaddingNeverContributes) {
  for (LossAggMode mode : {LossAggMode::kTokenMean, LossAggMode::kSeqMeanTokenSum,
                           LossAggMode::kSeqMeanTokenMean, LossAggMode::kSeqMeanTokenSumNorm}) {
    torch::Tensor a = aggregate_loss(fill_padding(losses(), valid(), 0), valid(), {mode});
    torch::Tensor b = aggregate_loss(fill_padding(losses(), valid(), -kInf), valid(), {mode});
    expect_same(a, b);
  }
}

TEST(LossAggregation, EmptyMaskGivesZeroAndBackwardStillWorks) {
  torch::Tensor x = mat({{1, 2}, {3, 4}}).requires_grad_();
  torch::Tensor none = mask({{0, 0}, {0, 0}});
  for (LossAggMode mode : {LossAggMode::kTokenMean, LossAggMode::kSeqMeanTokenSum,
                           LossAggMode::kSeqMeanTokenMean, LossAggMode::kSeqMeanTokenSumNorm}) {
    torch::Tensor loss = aggregate_loss(x, none, {mode});
    EXPECT_EQ(loss.item<double>(), 0.0) << to_string(mode);
    loss.backward();
    expect_same(x.grad(), torch::zeros_like(x));
  }
}

TEST(LossAggregation, ParsesVerlNamesAndRejectsOthers) {
  EXPECT_EQ(parse_loss_agg_mode("token-mean"), LossAggMode::kTokenMean);
  EXPECT_EQ(parse_loss_agg_mode("seq-mean-token-sum"), LossAggMode::kSeqMeanTokenSum);
  EXPECT_EQ(parse_loss_agg_mode("seq-mean-token-mean"), LossAggMode::kSeqMeanTokenMean);
  EXPECT_EQ(parse_loss_agg_mode("seq-mean-token-sum-norm"), LossAggMode::kSeqMeanTokenSumNorm);
  for (LossAggMode mode : {LossAggMode::kTokenMean, LossAggMode::kSeqMeanTokenSumNorm}) {
    EXPECT_EQ(parse_loss_agg_mode(to_string(mode)), mode);
  }
  try {
    parse_loss_agg_mode("token_mean");
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("'token_mean'"));
    EXPECT_THAT(e.what(), HasSubstr("token-mean"));
  }
}

TEST(LossAggregation, RejectsBadNormalizersAndShapes) {
  EXPECT_THROW(aggregate(LossAggMode::kTokenMean, 0.0), AlgorithmError);
  EXPECT_THROW(aggregate(LossAggMode::kSeqMeanTokenSumNorm, std::nullopt, -1.0), AlgorithmError);
  EXPECT_THROW(aggregate_loss(vec({1, 2}), torch::ones({2}, torch::kBool)), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
