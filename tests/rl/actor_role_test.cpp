// The actor role in process: generation columns, and that a PPO update
// moves probability toward responses with positive advantage.
#include "tests/rl/rl_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace rlwb::testing {
namespace {

using core::Batch;

const std::vector<std::string> kGenOut = {"responses", "response_mask", "response_text", "old_log_probs",
                                          "prompt_ids", "prompt_mask"};
const std::vector<std::string> kSeqIn = {"prompt_ids", "prompt_mask", "responses", "response_mask"};

Batch prompts(int64_t rows, const std::string& text) {
  Batch b;
  b.set_objects("prompts", std::vector<nlohmann::json>(rows, text));
  return b;
}

TEST(ActorRole, GenerateReturnsEveryColumnWithMatchingRows) {
  LocalRole actor("actor", tiny_actor_config());
  Batch out = actor.call("generate", prompts(5, "1+2="), {"prompts"}, kGenOut);
  for (auto& c : kGenOut) EXPECT_TRUE(out.has(c)) << c;
  EXPECT_EQ(out.tensor("responses").sizes(), (std::vector<int64_t>{5, 3}));
  EXPECT_EQ(out.objects("response_text").size(), 5u);
  // Log-probs of generated tokens are <= 0 and exactly 0 after the end.
  auto lp = out.tensor("old_log_probs"), mask = out.tensor("response_mask");
  EXPECT_TRUE((lp <= 0).all().item<bool>());
  EXPECT_TRUE((lp.masked_select(mask == 0) == 0).all().item<bool>());
}

TEST(ActorRole, UpdateRaisesTheLogProbOfPositivelyAdvantagedResponses) {
  LocalRole actor("actor", tiny_actor_config(1e-2));
  Batch rollout = actor.call("generate", prompts(32, "1+2="), {"prompts"}, kGenOut);
  auto lp_before = actor.call("log_prob", rollout, kSeqIn, {"lp"}).tensor("lp");
  // +1 for the first half of the rows, -1 for the rest.
  auto adv = torch::ones({32, 3});
  adv.slice(0, 16) = -1;
  adv = adv * rollout.tensor("response_mask").to(torch::kFloat32);
  Batch in = rollout;
  in.set_tensor("advantages", adv);
  std::vector<std::string> upd_in = {"prompt_ids", "prompt_mask", "responses", "response_mask", "old_log_probs", "advantages"};
  actor.call("update", in, upd_in, {});
  auto lp_after = actor.call("log_prob", rollout, kSeqIn, {"lp"}).tensor("lp");
  auto mask = rollout.tensor("response_mask").to(torch::kFloat32);
  auto seq_delta = ((lp_after - lp_before) * mask).sum(1);
  EXPECT_GT(seq_delta.slice(0, 0, 16).mean().item<double>(), seq_delta.slice(0, 16).mean().item<double>());
  EXPECT_GT(seq_delta.slice(0, 0, 16).mean().item<double>(), 0.0);
}

}  // namespace
}  // namespace rlwb::testing
