// GRPO, Dr.GRPO, RLOO and REINFORCE++-baseline against hand-computed
// groups; groups of one, all-equal groups, empty rows, padding.
#include "core/algorithms/group_advantages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/algorithms/algorithm_error.h"
#include "tests/core/algorithms/algorithms_test_support.h"

namespace rlwb::core::algorithms {
namespace {

using namespace test_support;  // NOLINT(google-build-using-namespace): test helpers
using ::testing::HasSubstr;

// Six rows, scores (sums of valid token rewards) 1, 0, 0.5, 2, 2, 3.
// Groups by id, not contiguous: id 5 = rows {0, 1, 4} (scores 1 0 2),
// id 1 = rows {2, 3} (0.5 2), id 8 = row {5} alone (3).
torch::Tensor rewards() {
  return mat({{0, 0, 1}, {0, 0, kNaN}, {0.2, 0.3, 9}, {2, kInf, 4}, {1, 1, 0}, {0, 0, 3}});
}
torch::Tensor valid() { return mask({{1, 1, 1}, {1, 1, 0}, {1, 1, 0}, {1, 0, 0}, {1, 1, 1}, {1, 1, 1}}); }
torch::Tensor groups() { return ids({5, 5, 1, 1, 5, 8}); }

// Row advantages broadcast over each row's valid tokens.
torch::Tensor on_tokens(std::initializer_list<double> per_row) {
  torch::Tensor a = vec(per_row).unsqueeze(1).expand({-1, 3});
  return torch::where(valid(), a, torch::zeros({}));
}

TEST(Grpo, NormalisesByGroupMeanAndUnbiasedStd) {
  // id 5: mean 1, std 1 -> 0, -1, +1 (over 1 + 1e-6).
  // id 1: mean 1.25, std sqrt(1.125) -> -+0.7071. id 8 alone: 3 / (1 + 1e-6).
  AdvantageResult out = grpo_advantage(rewards(), valid(), groups());
  torch::Tensor expected = on_tokens({0, -0.999999, -0.707106115, 0.707106115, 0.999999, 2.999997});
  expect_near(out.advantages, expected, 1e-6);
  expect_same(out.returns, out.advantages);
}

TEST(Grpo, EpsilonIsAddedToTheStd) {
  AdvantageResult out = grpo_advantage(rewards(), valid(), groups(), {.epsilon = 1.0});
  // id 5: (s - 1) / 2; id 8: 3 / 2.
  expect_near(out.advantages[1], vec({-0.5, -0.5, 0}), 1e-6);
  expect_near(out.advantages[5], vec({1.5, 1.5, 1.5}), 1e-6);
}

TEST(DrGrpo, SubtractsTheGroupMeanWithoutStd) {
  AdvantageResult out = dr_grpo_advantage(rewards(), valid(), groups());
  expect_near(out.advantages, on_tokens({0, -1, -0.75, 0.75, 1, 3}), 1e-6);
  AdvantageResult same = grpo_advantage(rewards(), valid(), groups(), {.normalize_by_std = false});
  expect_near(same.advantages, out.advantages, 1e-6);
}

TEST(Rloo, UsesTheMeanOfTheOtherSamples) {
  // id 5: 1 - (0 + 2) / 2 = 0, 0 - 3 / 2 = -1.5, 2 - 1 / 2 = 1.5.
  // id 1: 0.5 - 2 = -1.5, 2 - 0.5 = 1.5. id 8 alone keeps its score.
  AdvantageResult out = rloo_advantage(rewards(), valid(), groups());
  expect_near(out.advantages, on_tokens({0, -1.5, -1.5, 1.5, 1.5, 3}), 1e-6);
}

TEST(ReinforcePPBaseline, SubtractsGroupMeanThenWhitensOverTokens) {
  // Row advantages 0 -1 -0.75 0.75 1 3 on 3 2 2 1 3 3 tokens, whitened
  // together (reference_values.py).
  AdvantageResult out = reinforce_pp_baseline_advantage(rewards(), valid(), groups());
  expect_near(out.advantages,
              on_tokens({-0.453649651, -1.14025453, -0.968603308, 0.0613040068, 0.232955226, 1.60616498}));
}

TEST(GroupAdvantages, AllEqualScoresGiveZero) {
  torch::Tensor r = mat({{0, 1}, {1, 0}, {0.5, 0.5}});
  torch::Tensor m = mask({{1, 1}, {1, 1}, {1, 1}});
  torch::Tensor g = ids({0, 0, 0});
  torch::Tensor zero = torch::zeros({3, 2});
  expect_same(grpo_advantage(r, m, g).advantages, zero);
  expect_same(dr_grpo_advantage(r, m, g).advantages, zero);
  expect_same(rloo_advantage(r, m, g).advantages, zero);
  expect_same(reinforce_pp_baseline_advantage(r, m, g).advantages, zero);
}

TEST(GroupAdvantages, GroupsOfOneKeepTheirScore) {
  torch::Tensor r = mat({{0, 2}, {-1, 0}});
  torch::Tensor m = mask({{1, 1}, {1, 0}});
  torch::Tensor g = ids({0, 1});
  expect_near(grpo_advantage(r, m, g, {.epsilon = 0}).advantages, mat({{2, 2}, {-1, 0}}));
  expect_near(dr_grpo_advantage(r, m, g).advantages, mat({{2, 2}, {-1, 0}}));
  expect_near(rloo_advantage(r, m, g).advantages, mat({{2, 2}, {-1, 0}}));
}

TEST(GroupAdvantages, EmptyRowIsNoSampleAndGetsZero) {
  // Append a row with an empty mask (and a huge reward under it) to group 5.
  torch::Tensor r = torch::cat({rewards(), mat({{1e6, 1e6, 1e6}})});
  torch::Tensor m = torch::cat({valid(), mask({{0, 0, 0}})});
  torch::Tensor g = torch::cat({groups(), ids({5})});
  auto check = [&](const AdvantageResult& with, const AdvantageResult& without) {
    expect_near(with.advantages.slice(0, 0, 6), without.advantages, 1e-6);
    expect_same(with.advantages[6], torch::zeros({3}));
  };
  check(grpo_advantage(r, m, g), grpo_advantage(rewards(), valid(), groups()));
  check(dr_grpo_advantage(r, m, g), dr_grpo_advantage(rewards(), valid(), groups()));
  check(rloo_advantage(r, m, g), rloo_advantage(rewards(), valid(), groups()));
  check(reinforce_pp_baseline_advantage(r, m, g),
        reinforce_pp_baseline_advantage(rewards(), valid(), groups()));
}

TEST(GroupAdvantages, PaddingNeverContributes) {
  torch::Tensor clean = fill_padding(rewards(), valid(), 0);
  expect_same(grpo_advantage(rewards(), valid(), groups()).advantages,
              grpo_advantage(clean, valid(), groups()).advantages);
  expect_same(rloo_advantage(rewards(), valid(), groups()).advantages,
              rloo_advantage(clean, valid(), groups()).advantages);
  expect_same(reinforce_pp_baseline_advantage(rewards(), valid(), groups()).advantages,
              reinforce_pp_baseline_advantage(clean, valid(), groups()).advantages);
}

TEST(GroupAdvantages, GroupIdsOnlyNeedToBeEqualWithinAGroup) {
  // Relabelling the groups (and using int32 ids) changes nothing.
  torch::Tensor relabelled = ids({-3, -3, 100, 100, -3, 0}).to(torch::kInt32);
  expect_same(grpo_advantage(rewards(), valid(), relabelled).advantages,
              grpo_advantage(rewards(), valid(), groups()).advantages);
}

TEST(GroupAdvantages, RejectsBadGroupIndex) {
  try {
    grpo_advantage(rewards(), valid(), ids({0, 0, 1}));
    FAIL() << "expected AlgorithmError";
  } catch (const AlgorithmError& e) {
    EXPECT_THAT(e.what(), HasSubstr("group_index"));
    EXPECT_THAT(e.what(), HasSubstr("6 rows"));
  }
  EXPECT_THROW(rloo_advantage(rewards(), valid(), vec({0, 0, 1, 1, 0, 2})), AlgorithmError);
  EXPECT_THROW(grpo_advantage(rewards(), valid(), groups(), {.epsilon = -1}), AlgorithmError);
}

}  // namespace
}  // namespace rlwb::core::algorithms
