// Discounted returns, REINFORCE++ and ReMax against hand-computed cases.
#include "core/algorithms/discounted_returns.h"

#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers

// Row 0: rewards 1 2 3 then padding. Row 1: valid at 0 and 2 (a hole at 1).
torch::Tensor rewards() { return mat({{1, 2, 3, kNaN}, {1, 100, 2, kInf}}); }
torch::Tensor valid() { return mask({{1, 1, 1, 0}, {1, 0, 1, 0}}); }

TEST(DiscountedReturns, MatchesHandComputedValues) {
  // gamma 0.5. Row 0: G_2 = 3, G_1 = 2 + 1.5 = 3.5, G_0 = 1 + 1.75 = 2.75.
  // Row 1 skips the hole: G_2 = 2, G_0 = 1 + 0.5 * 2 = 2.
  expect_near(discounted_returns(rewards(), valid(), 0.5), mat({{2.75, 3.5, 3, 0}, {2, 0, 2, 0}}));
  // gamma 1: reverse cumulative sums; gamma 0: the rewards themselves.
  expect_near(discounted_returns(rewards(), valid(), 1.0), mat({{6, 5, 3, 0}, {3, 0, 2, 0}}));
  expect_near(discounted_returns(rewards(), valid(), 0.0), mat({{1, 2, 3, 0}, {1, 0, 2, 0}}));
}

TEST(ReinforcePP, WhitensReturnsOverTheBatch) {
  AdvantageResult out = reinforce_pp_advantage(rewards(), valid(), 0.5);
  expect_near(out.returns, mat({{2.75, 3.5, 3, 0}, {2, 0, 2, 0}}));
  // reference_values.py: whiten of 2.75 3.5 3 2 2
  expect_near(out.advantages,
              mat({{0.153392996, 1.30384047, 0.536875486, 0}, {-0.997054474, 0, -0.997054474, 0}}));
}

TEST(ReinforcePP, AllEqualReturnsGiveZeroAdvantages) {
  // One valid token per row, same reward everywhere: nothing to prefer.
  AdvantageResult out = reinforce_pp_advantage(mat({{0, 1}, {1, 7}}), mask({{0, 1}, {1, 0}}));
  expect_near(out.advantages, mat({{0, 0}, {0, 0}}));
}

TEST(Remax, SubtractsTheGreedyBaselineFromUndiscountedReturns) {
  torch::Tensor r = mat({{0, 0, 1, kNaN}, {0, 0.5, kNaN, kNaN}});
  torch::Tensor m = mask({{1, 1, 1, 0}, {1, 1, 0, 0}});
  AdvantageResult out = remax_advantage(r, vec({0.5, 1}), m);
  expect_near(out.returns, mat({{1, 1, 1, 0}, {0.5, 0.5, 0, 0}}));
  expect_near(out.advantages, mat({{0.5, 0.5, 0.5, 0}, {-0.5, -0.5, 0, 0}}));
}

TEST(Remax, SampleAsGoodAsGreedyGetsZero) {
  AdvantageResult out = remax_advantage(mat({{0, 2}}), vec({2}), mask({{1, 1}}));
  expect_near(out.advantages, mat({{0, 0}}));
}

TEST(DiscountedReturns, PaddingNeverContributes) {
  torch::Tensor clean = fill_padding(rewards(), valid(), 0);
  expect_same(discounted_returns(rewards(), valid(), 0.9), discounted_returns(clean, valid(), 0.9));
  expect_same(reinforce_pp_advantage(rewards(), valid(), 0.9).advantages,
              reinforce_pp_advantage(clean, valid(), 0.9).advantages);
  expect_same(remax_advantage(rewards(), vec({1, 2}), valid()).advantages,
              remax_advantage(clean, vec({1, 2}), valid()).advantages);
}

TEST(DiscountedReturns, EmptyRowIsAllZero) {
  torch::Tensor m = mask({{1, 1, 1, 0}, {0, 0, 0, 0}});
  expect_same(discounted_returns(rewards(), m, 0.5)[1], torch::zeros({4}));
  expect_same(reinforce_pp_advantage(rewards(), m, 0.5).advantages[1], torch::zeros({4}));
  expect_same(remax_advantage(rewards(), vec({0, 3}), m).advantages[1], torch::zeros({4}));
}

TEST(DiscountedReturns, RejectsBadInput) {
  EXPECT_THROW(discounted_returns(rewards(), valid(), 1.1), AlgorithmError);
  EXPECT_THROW(discounted_returns(rewards(), valid().slice(0, 0, 1), 1.0), AlgorithmError);
  EXPECT_THROW(remax_advantage(rewards(), vec({1, 2, 3}), valid()), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
