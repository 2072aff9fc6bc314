// The actor role in process: generation columns, and that a PPO update
// moves probability toward responses with positive advantage.
#include "tests/rl/rl_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <thread>

#include "workers/spmd_group.h"

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

// The same global batch, updated by one rank and by two ranks of a c10d
// group (two threads here) with half the rows each: the same weights, and
// metrics that every rank reports alike (they are reduced in the gradient
// all-reduce of the last step) with the global gradient's norm.
TEST(ActorRole, UpdateOverTwoRanksEqualsOneRankOnTheWholeBatch) {
  auto config = tiny_actor_config(1e-2);
  config["ppo"] = {{"use_kl_loss", false}, {"epochs", 2}};  // two steps: one plain, one carrying the metrics
  LocalRole single("actor", config);
  Batch in = single.call("generate", prompts(32, "1+2="), {"prompts"}, kGenOut);
  torch::manual_seed(5);
  in.set_tensor("advantages", torch::randn({32, 3}) * in.tensor("response_mask").to(torch::kFloat32));
  const std::vector<std::string> upd_in = {"prompt_ids", "prompt_mask", "responses", "response_mask",
                                           "old_log_probs", "advantages"};
  nlohmann::json one_metrics = single.call("update", in, upd_in, {}).meta()["metrics"];

  const int port = 29000 + static_cast<int>(::getpid() % 5000);
  std::vector<std::unique_ptr<LocalRole>> ranks;
  std::vector<std::unique_ptr<workers::SpmdGroup>> groups(2);
  for (int rank = 0; rank < 2; ++rank) {
    ranks.push_back(std::make_unique<LocalRole>("actor", config));
    ranks[rank]->env.rank = rank;
    ranks[rank]->env.world = 2;
    ranks[rank]->env.spmd = [&groups, rank, port]() -> workers::SpmdGroup& {
      if (!groups[rank])
        groups[rank] = std::make_unique<workers::SpmdGroup>(
            workers::SpmdOptions{"127.0.0.1", port, rank, 2, std::chrono::milliseconds(30000)});
      return *groups[rank];
    };
  }
  std::vector<nlohmann::json> rank_metrics(2);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank) {
    threads.emplace_back([&, rank] {
      Batch half = in.slice(rank * 16, rank * 16 + 16);
      rank_metrics[rank] = ranks[rank]->call("update", half, upd_in, {}).meta()["metrics"];
    });
  }
  for (auto& t : threads) t.join();

  EXPECT_EQ(rank_metrics[0].dump(), rank_metrics[1].dump());
  EXPECT_NEAR(rank_metrics[0]["actor/grad_norm"].get<double>(), one_metrics["actor/grad_norm"].get<double>(), 1e-4);
  EXPECT_NEAR(rank_metrics[0]["actor/lr"].get<double>(), one_metrics["actor/lr"].get<double>(), 1e-12);
  for (const char* key : {"actor/pg_clipfrac", "actor/ppo_kl", "actor/entropy"})
    EXPECT_TRUE(rank_metrics[0].contains(key)) << key;
  // The same weights: log-probs of the whole batch agree.
  const std::vector<std::string> seq_in = {"prompt_ids", "prompt_mask", "responses", "response_mask"};
  auto lp_one = single.call("log_prob", in, seq_in, {"lp"}).tensor("lp");
  auto lp_two = ranks[0]->call("log_prob", in, seq_in, {"lp"}).tensor("lp");
  EXPECT_TRUE(torch::allclose(lp_one, lp_two, 0, 1e-5)) << (lp_one - lp_two).abs().max();
}

}  // namespace
}  // namespace rlwb::testing
