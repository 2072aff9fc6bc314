// Entropy from logits (hand-computed, large and -inf logits) and the
// entropy bonus.
#include "core/algorithms/entropy.h"

#include <gtest/gtest.h>

#include <cmath>

#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers

TEST(EntropyFromLogits, MatchesHandComputedDistribution) {
  // logits 0 0 ln2 -> p = 1/4 1/4 1/2 -> H = 1.5 ln 2
  torch::Tensor logits = mat({{0, 0, std::log(2.0)}});
  expect_near(entropy_from_logits(logits), vec({1.5 * std::log(2.0)}));
  expect_near(entropy_from_logits(logits), vec({1.03972077}));
}

TEST(EntropyFromLogits, GradientIsMinusPTimesLogPPlusH) {
  torch::Tensor logits = mat({{0, 0, std::log(2.0)}}).requires_grad_();
  entropy_from_logits(logits).sum().backward();
  expect_near(logits.grad(), mat({{0.0866433976, 0.0866433976, -0.173286795}}));
}

TEST(EntropyFromLogits, UniformIsLogVocabAndShiftInvariant) {
  expect_near(entropy_from_logits(torch::zeros({2, 3, 5})), torch::full({2, 3}, std::log(5.0)));
  // Logits that overflow a naive softmax in float32.
  expect_near(entropy_from_logits(mat({{1000, 1000}, {-1000, -1000}})), vec({std::log(2.0), std::log(2.0)}));
  // One dominant logit: a point mass.
  expect_near(entropy_from_logits(mat({{0, 200}})), vec({0}));
}

TEST(EntropyFromLogits, MinusInfinityLogitsContributeNothing) {
  torch::Tensor logits = mat({{0, -kInf, 0}, {3, -kInf, -kInf}}).requires_grad_();
  torch::Tensor h = entropy_from_logits(logits);
  expect_near(h, vec({std::log(2.0), 0}));
  h.sum().backward();
  EXPECT_TRUE(torch::isfinite(logits.grad()).all().item<bool>()) << logits.grad();
}

TEST(EntropyBonus, AggregatesValidTokensAndNegatesWithCoefficient) {
  torch::Tensor h = mat({{1, 2, kNaN}, {4, kInf, 0}});
  torch::Tensor valid = mask({{1, 1, 0}, {1, 0, 0}});
  EntropyBonus bonus = entropy_bonus(h, valid, 0.01);
  expect_near(bonus.entropy, 7.0 / 3);
  expect_near(bonus.loss, -0.07 / 3);
  EXPECT_NEAR(bonus.metrics().at("actor/entropy"), 7.0 / 3, 1e-6);
  EntropyBonus per_seq = entropy_bonus(h, valid, 1.0, {LossAggMode::kSeqMeanTokenMean});
  expect_near(per_seq.entropy, (1.5 + 4) / 2);
}

TEST(EntropyBonus, LossGradientIncreasesEntropy) {
  // Descending the bonus loss must move logits toward uniform.
  torch::Tensor logits = mat({{2, 0, 0}}).unsqueeze(0).requires_grad_();
  torch::Tensor h = entropy_from_logits(logits);
  entropy_bonus(h, torch::ones({1, 1}, torch::kBool), 0.5).loss.backward();
  torch::Tensor stepped = (logits - 0.1 * logits.grad()).detach();
  EXPECT_GT(entropy_from_logits(stepped).item<double>(), h.item<double>());
}

TEST(EntropyBonus, RejectsNegativeCoefficient) {
  EXPECT_THROW(entropy_bonus(mat({{1}}), mask({{1}}), -0.1), AlgorithmError);
  EXPECT_THROW(entropy_from_logits(torch::zeros({2, 0})), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
