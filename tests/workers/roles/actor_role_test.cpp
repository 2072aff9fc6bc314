// The actor role in process: generation columns, and that a PPO update
// moves probability toward responses with positive advantage.
#include "tests/workers/roles/rl_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/algorithms/algorithms.h"

namespace rlwb::testing {
namespace {

using core::Batch;

const std::vector<std::string> kGenOut = {"responses",     "response_mask", "response_text",
                                          "old_log_probs", "prompt_ids",    "prompt_mask"};

Batch prompts(int64_t rows, const std::string& text) {
  Batch b;
  b.set_objects("prompts", std::vector<nlohmann::json>(rows, text));
  return b;
}

TEST(ActorRole, GenerateReturnsEveryColumnWithMatchingRows) {
  LocalRole actor("actor", tiny_actor_config());
  Batch out = actor.call("generate", prompts(5, "1+2="), kGenOut);
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
  Batch rollout = actor.call("generate", prompts(32, "1+2="), kGenOut);
  auto lp_before = actor.call("log_prob", rollout).tensor("old_log_probs");
  // +1 for the first half of the rows, -1 for the rest.
  auto adv = torch::ones({32, 3});
  adv.slice(0, 16) = -1;
  adv = adv * rollout.tensor("response_mask").to(torch::kFloat32);
  Batch in = rollout;
  in.set_tensor("advantages", adv);
  actor.call("update", in);
  auto lp_after = actor.call("log_prob", rollout).tensor("old_log_probs");
  auto mask = rollout.tensor("response_mask").to(torch::kFloat32);
  auto seq_delta = ((lp_after - lp_before) * mask).sum(1);
  EXPECT_GT(seq_delta.slice(0, 0, 16).mean().item<double>(), seq_delta.slice(0, 16).mean().item<double>());
  EXPECT_GT(seq_delta.slice(0, 0, 16).mean().item<double>(), 0.0);
}

// A rollout of 32 rows with random advantages on the response tokens.
Batch rollout_with_advantages(LocalRole& actor) {
  Batch in = actor.call("generate", prompts(32, "1+2="), kGenOut);
  torch::manual_seed(5);
  in.set_tensor("advantages", torch::randn({32, 3}) * in.tensor("response_mask").to(torch::kFloat32));
  return in;
}

// `single` (one rank, one micro-batch) has run `update` over `in` and
// reported `want`. The same update by one rank in micro-batches of 5 rows,
// and by two ranks with 16 rows each, must report the same metrics (but
// `per_rank`, which each rank computes over its own rows), alike on both
// ranks, and leave the same weights: `probe` (a scoring method) gives the
// same output over the whole batch.
void expect_split_updates_match(const std::string& role, nlohmann::json config, LocalRole& single,
                                const nlohmann::json& want, const Batch& in, const std::string& probe,
                                const std::string& probe_port, const std::string& per_rank = "") {
  config["micro_batch_size"] = 5;
  LocalRole micro(role, config);
  expect_same_metrics(micro.call("update", in).meta()["metrics"], want, "micro-batches of 5");

  config["micro_batch_size"] = 16;
  TwoRanks two(role, config);
  auto outs = two.call_split("update", in);
  EXPECT_EQ(outs[0].meta()["metrics"].dump(), outs[1].meta()["metrics"].dump());
  auto global = [&](nlohmann::json m) {
    if (!per_rank.empty()) m.erase(per_rank);
    return m;
  };
  expect_same_metrics(global(outs[0].meta()["metrics"]), global(want), "two ranks");

  auto expected = single.call(probe, in).tensor(probe_port);
  for (LocalRole* other : {&micro, two.ranks[0].get()}) {
    auto got = other->call(probe, in).tensor(probe_port);
    EXPECT_TRUE(torch::allclose(expected, got, 0, 1e-5)) << (expected - got).abs().max();
  }
}

// The same global batch, updated by one rank in one micro-batch, by one rank
// in uneven micro-batches, and by two ranks of a c10d group (two threads)
// with half the rows each: the same weights, and the same metrics -- the
// loss of the whole mini-batch, the clip fraction and KL over all its
// tokens, the global gradient's norm -- reported alike by every rank (they
// are reduced in each step's gradient all-reduce), for a token-mean loss
// and a sequence-mean one.
TEST(ActorRole, UpdateOverTwoRanksOrMicroBatchesEqualsOneRankOnTheWholeBatch) {
  for (const char* mode : {"token-mean", "seq-mean-token-mean"}) {
    SCOPED_TRACE(mode);
    auto config = tiny_actor_config(1e-2);
    config["ppo"] = {{"use_kl_loss", false}, {"epochs", 2}, {"loss_agg_mode", mode}};  // two optimizer steps
    config["micro_batch_size"] = 32;
    LocalRole single("actor", config);
    Batch in = rollout_with_advantages(single);
    nlohmann::json one_metrics = single.call("update", in).meta()["metrics"];
    for (const char* key :
         {"actor/pg_loss", "actor/pg_clipfrac", "actor/ppo_kl", "actor/entropy", "actor/grad_norm"})
      EXPECT_TRUE(one_metrics.contains(key)) << key;

    expect_split_updates_match("actor", config, single, one_metrics, in, "log_prob", "old_log_probs");

    // And the metric is the loss: one step's pg_loss is the policy loss of
    // the whole batch under the weights before the step.
    config["ppo"]["epochs"] = 1;
    LocalRole fresh("actor", config);
    auto lp = fresh.call("log_prob", in).tensor("old_log_probs");
    core::algorithms::PolicyLossOptions options;
    options.aggregation = core::algorithms::parse_loss_agg_mode(mode);
    double expected = core::algorithms::policy_loss(in.tensor("old_log_probs"), lp, in.tensor("advantages"),
                                                    in.tensor("response_mask"), options)
                          .loss.item<double>();
    double reported = fresh.call("update", in).meta()["metrics"]["actor/pg_loss"].get<double>();
    EXPECT_NEAR(reported, expected, 1e-6);
  }
}

// The critic likewise: the value loss of the whole mini-batch and the same
// weights, whether one rank, micro-batches or two ranks train it.
TEST(CriticRole, UpdateOverTwoRanksOrMicroBatchesEqualsOneRankOnTheWholeBatch) {
  LocalRole actor("actor", tiny_actor_config());
  Batch in = rollout_with_advantages(actor);
  auto config = tiny_actor_config(1e-2);
  config["ppo"] = {{"epochs", 2}, {"cliprange_value", 0.05}};
  config.erase("rollout");  // the critic does not sample: its config has no rollout section
  config["micro_batch_size"] = 32;
  LocalRole single("critic", config);
  in.set_tensor("values", single.call("values", in).tensor("values"));
  torch::manual_seed(6);
  in.set_tensor("returns", torch::randn({32, 3}) * in.tensor("response_mask").to(torch::kFloat32));
  nlohmann::json one_metrics = single.call("update", in).meta()["metrics"];
  EXPECT_GT(one_metrics["critic/vf_loss"].get<double>(), 0.0);
  EXPECT_GT(one_metrics["critic/vf_clipfrac"].get<double>(), 0.0);

  // Explained variance is the one metric each rank computes over its own rows.
  expect_split_updates_match("critic", config, single, one_metrics, in, "values", "values",
                             "critic/vf_explained_var");
}

}  // namespace
}  // namespace rlwb::testing
