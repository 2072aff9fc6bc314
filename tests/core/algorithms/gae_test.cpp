// GAE against a hand-computed case (gamma 0.9, lambda 0.8), with a hole in
// the mask, whitening, padding and edge cases.
#include "core/algorithms/gae.h"

#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers

// Row 0: three valid tokens, one padded. Row 1: valid at 0, 2, 3 (a hole at
// 1, as a masked tool output in a multi-turn response).
torch::Tensor rewards() { return mat({{0, 0, 1, kNaN}, {0.5, kNaN, 0, 2}}); }
torch::Tensor values() { return mat({{0.5, 0.6, 0.7, kNaN}, {1, kInf, 0.2, 0.4}}); }
torch::Tensor valid() { return mask({{1, 1, 1, 0}, {1, 0, 1, 1}}); }
const GaeOptions kRaw{.gamma = 0.9, .lambda = 0.8, .whiten = false};

TEST(Gae, MatchesHandComputedAdvantagesAndReturns) {
  // Row 0, backwards: delta_2 = 1 - 0.7 = 0.3, A_2 = 0.3;
  //   delta_1 = 0.9 * 0.7 - 0.6 = 0.03, A_1 = 0.03 + 0.72 * 0.3 = 0.246;
  //   delta_0 = 0.9 * 0.6 - 0.5 = 0.04, A_0 = 0.04 + 0.72 * 0.246 = 0.21712.
  // Row 1 skips position 1: A_3 = 1.6, A_2 = 0.16 + 0.72 * 1.6 = 1.312,
  //   A_0 = (0.5 + 0.9 * 0.2 - 1) + 0.72 * 1.312 = 0.62464.
  AdvantageResult out = gae_advantage(rewards(), values(), valid(), kRaw);
  expect_near(out.advantages, mat({{0.21712, 0.246, 0.3, 0}, {0.62464, 0, 1.312, 1.6}}));
  expect_near(out.returns, mat({{0.71712, 0.846, 1.0, 0}, {1.62464, 0, 1.512, 2.0}}));
}

TEST(Gae, WhitensAdvantagesOverTheBatchButNotReturns) {
  AdvantageResult out = gae_advantage(rewards(), values(), valid(), {.gamma = 0.9, .lambda = 0.8});
  // reference_values.py
  expect_near(out.advantages,
              mat({{-0.8353343, -0.787037739, -0.696732533, 0}, {-0.153831016, 0, 0.995653912, 1.47728168}}));
  expect_near(out.returns, mat({{0.71712, 0.846, 1.0, 0}, {1.62464, 0, 1.512, 2.0}}));
}

TEST(Gae, LambdaOneGammaOneIsReturnMinusValue) {
  // With gamma = lambda = 1, A_t = (sum of rewards from t) - V_t.
  AdvantageResult out =
      gae_advantage(rewards(), values(), valid(), {.gamma = 1, .lambda = 1, .whiten = false});
  expect_near(out.advantages, mat({{0.5, 0.4, 0.3, 0}, {1.5, 0, 1.8, 1.6}}));
}

TEST(Gae, LambdaZeroIsOneStepTdError) {
  AdvantageResult out =
      gae_advantage(rewards(), values(), valid(), {.gamma = 0.9, .lambda = 0, .whiten = false});
  expect_near(out.advantages, mat({{0.04, 0.03, 0.3, 0}, {-0.32, 0, 0.16, 1.6}}));
}

TEST(Gae, PaddingNeverContributes) {
  AdvantageResult a =
      gae_advantage(fill_padding(rewards(), valid(), 0), fill_padding(values(), valid(), 0), valid(), kRaw);
  AdvantageResult b = gae_advantage(fill_padding(rewards(), valid(), 1e6),
                                    fill_padding(values(), valid(), -kInf), valid(), kRaw);
  expect_same(a.advantages, b.advantages);
  expect_same(a.returns, b.returns);
}

TEST(Gae, EmptyRowGetsZerosAndLeavesOthersUnchanged) {
  torch::Tensor r = torch::cat({rewards(), mat({{5, 5, 5, 5}})});
  torch::Tensor v = torch::cat({values(), mat({{1, 1, 1, 1}})});
  torch::Tensor m = torch::cat({valid(), mask({{0, 0, 0, 0}})});
  for (bool whiten : {false, true}) {
    GaeOptions o{.gamma = 0.9, .lambda = 0.8, .whiten = whiten};
    AdvantageResult with = gae_advantage(r, v, m, o);
    AdvantageResult without = gae_advantage(rewards(), values(), valid(), o);
    expect_near(with.advantages.slice(0, 0, 2), without.advantages, 1e-6);
    expect_same(with.advantages[2], torch::zeros({4}));
    expect_same(with.returns[2], torch::zeros({4}));
  }
}

TEST(Gae, RejectsBadShapesAndParameters) {
  EXPECT_THROW(gae_advantage(rewards(), values().slice(1, 0, 3), valid()), AlgorithmError);
  EXPECT_THROW(gae_advantage(rewards(), values(), valid(), {.gamma = 1.5}), AlgorithmError);
  EXPECT_THROW(gae_advantage(rewards(), values(), valid(), {.lambda = -0.1}), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
