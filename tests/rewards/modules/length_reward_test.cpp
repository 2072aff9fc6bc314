// Reward type "length": a penalty for length beyond (or short of) a target.
#include "tests/rewards/modules/reward_test_support.h"

using namespace rlwb::rewards::testing;
using namespace rlwb;

namespace {
const std::vector<std::string> kIn = {"response_text", "response_mask"};
}

TEST(LengthReward, TokensComeFromTheMaskAndArePenalisedPerTokenOverTheTarget) {
  auto len = make_reward("length", {{"target", 4}, {"penalty", 0.25}});
  core::Batch b;
  b.set_objects("response_text", {"a", "b", "c"});  // the text does not count for tokens
  b.set_tensor("response_mask", mask_of({2, 4, 7}, 8));
  auto s = score(*len, b, kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{0, 0, -0.75}));
  EXPECT_EQ(s.details[2]["length"], 7);
  EXPECT_FLOAT_EQ(s.tokens[2][6].item<float>(), -0.75f);
}

TEST(LengthReward, TokensNeedOnlyTheMask) {
  auto len = make_reward("length", {{"penalty", 1}});
  core::Batch b;
  b.set_tensor("response_mask", mask_of({1, 3}, 3));
  auto s = score(*len, b, {"response_mask"});
  EXPECT_EQ(s.scores, (std::vector<double>{-1, -3}));
}

TEST(LengthReward, CharsCountUtf8CodePoints) {
  auto len = make_reward("length", {{"unit", "chars"}, {"target", 3}, {"penalty", 1}});
  // "héllo" is 5 characters in 6 bytes.
  auto s = score(*len, batch_of({"h\xc3\xa9llo", "abc"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{-2, 0}));
}

TEST(LengthReward, MaxLengthRampsLinearlyToMaxPenaltyAsDapoOverlongShaping) {
  auto len = make_reward("length", {{"unit", "chars"}, {"target", 4}, {"max_length", 8}});
  auto s = score(*len, batch_of({"1234", "123456", "12345678", "1234567890"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{0, -0.5, -1, -1}));
  auto capped = make_reward("length", {{"unit", "chars"}, {"penalty", 1}, {"max_penalty", 2.5}});
  EXPECT_EQ(score(*capped, batch_of({"12", "12345"}), kIn).scores, (std::vector<double>{-2, -2.5}));
}

TEST(LengthReward, BelowPenaltyPunishesShortResponses) {
  auto len = make_reward("length", {{"unit", "chars"}, {"target", 5}, {"below_penalty", 0.5}});
  auto s = score(*len, batch_of({"12", "12345", "1234567"}), kIn);
  EXPECT_EQ(s.scores, (std::vector<double>{-1.5, 0, 0}));
}

TEST(LengthReward, BadConfigIsNamed) {
  expect_error([] { make_reward("length", json::object()); },
               {"rewards.r.config.penalty", "every score would be 0"});
  expect_error(
      [] {
        make_reward("length", {{"penalty", 1}, {"max_length", 10}});
      },
      {"rewards.r.config.max_length", "not both"});
  expect_error(
      [] {
        make_reward("length", {{"target", 10}, {"max_length", 10}});
      },
      {"rewards.r.config.max_length", "must be greater than target"});
  expect_error(
      [] {
        make_reward("length", {{"penalty", -1}});
      },
      {"rewards.r.config.penalty", "out of range", "at least 0"});
  expect_error(
      [] {
        make_reward("length", {{"penalty", 1}, {"unit", "words"}});
      },
      {"rewards.r.config.unit", "'words' is not one of chars, tokens"});
}

TEST(LengthReward, CharsNeedTheTextColumn) {
  auto len = make_reward("length", {{"unit", "chars"}, {"penalty", 1}});
  core::Batch b;
  b.set_tensor("response_mask", mask_of({1}, 2));
  expect_error([&] { score(*len, b, {"response_mask"}); },
               {"unit chars reads the response text", "in: [response_text, response_mask]"});
}
