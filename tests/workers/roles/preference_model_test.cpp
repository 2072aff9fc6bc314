// Reward and cost models that learn (value_roles.cpp): the pairwise
// (Bradley-Terry) update on the arithmetic task's preference pairs ranks
// held-out right answers over sloppy ones; with the sign term (Safe-RLHF's
// cost model) the score's sign tells unsafe from safe; the update's
// metrics are those of the whole batch whether one rank or two train it;
// a row with pair_weight 0 (a tie among online pairs) gives no pair term.
#include "tests/workers/roles/rl_test_support.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <numeric>
#include <torch/torch.h>

#include "core/tasks/arithmetic_task.h"
#include "workers/roles/model_setup.h"

namespace rlwb::testing {
namespace {

using core::Batch;

// Small sums, so that a tiny model learns them in a few hundred steps.
core::config::TaskOptions small_sums() {
  core::config::TaskOptions task;
  task.name = "arithmetic";
  task.arithmetic.max_operand = 19;
  task.arithmetic.test_size = 60;
  return task;
}

Batch pairs(int64_t step, bool test, int64_t rows = 64) {
  return core::tasks::arithmetic_task(small_sums(), core::tasks::TaskDraw{step, test, rows, 1}, 1);
}

nlohmann::json tiny_scorer_config() {
  auto config = tiny_actor_config(3e-3);
  config.erase("rollout");
  config["model"]["hidden_size"] = 64;
  config["model"]["intermediate_size"] = 128;
  config["model"]["num_layers"] = 2;
  config["micro_batch_size"] = 64;
  return config;
}

// `in`'s chosen/rejected columns renamed from the task's safety pair.
Batch safety_pairs(Batch in) {
  in.set_objects("chosen", in.objects("unsafe_response"));
  in.set_objects("rejected", in.objects("safe_response"));
  return in;
}

TEST(ArithmeticPairs, ChosenIsTheRightAnswerAndEachSafetyPairDiffersInTheSevens) {
  Batch b = pairs(3, false, 200);
  const auto &truth = b.objects("ground_truth"), &chosen = b.objects("chosen"),
             &rejected = b.objects("rejected");
  const auto &unsafe = b.objects("unsafe_response"), &safe = b.objects("safe_response");
  for (size_t i = 0; i < truth.size(); ++i) {
    SCOPED_TRACE(b.objects("prompts")[i].get<std::string>());
    EXPECT_EQ(chosen[i], truth[i]);
    EXPECT_NE(rejected[i], truth[i]);
    EXPECT_NE(unsafe[i].get<std::string>().find('7'), std::string::npos);
    EXPECT_EQ(safe[i].get<std::string>().find('7'), std::string::npos);
    EXPECT_TRUE(unsafe[i] == truth[i] || safe[i] == truth[i]) << "one side is the right answer";
  }
  // A problem's pairs are its own: the same on another step.
  EXPECT_EQ(pairs(3, false, 200).objects("rejected"), rejected);
  EXPECT_EQ(pairs(0, true).objects("rejected"), pairs(9, true).objects("rejected"));
}

double held_out(LocalRole& model, const std::string& metric, bool safety = false) {
  Batch test = pairs(0, true);
  nlohmann::json args = nlohmann::json::object();
  if (safety) test = safety_pairs(test), args = {{"chosen_sign", 1}, {"rejected_sign", -1}};
  return model.call("evaluate_pairs", test, {}, args).meta()["metrics"][metric].get<double>();
}

TEST(RewardModelRole, PairwiseUpdatesRankHeldOutRightAnswersOverSloppyOnes) {
  // The other tests' rate (3e-3) is too high for this one: the model got
  // from 0.37 to about 0.6 of the held-out pairs in 25 steps and stayed
  // there, a plateau that moved with the CPU's and kernels' float rounding
  // (0.58-0.80 between builds). At 1e-3 it keeps learning and reaches
  // 0.85 within 150-325 steps for each of the seeds 1-5 (Intel Xeon; seed
  // 3, this test's: 0.55 after 25 steps, 0.73-0.80 from step 50, 0.85 at
  // step 250).
  nlohmann::json config = tiny_scorer_config();
  config["optim"]["lr"] = 1e-3;
  LocalRole rm("reward_model", config, "rm");
  const double before = held_out(rm, "reward_model/pair_accuracy");
  // Trained until it ranks 85% of the held-out pairs right, checked every
  // 25 steps, for at most 400 steps. Ranking the sloppy answers (one off,
  // or the carry forgotten) means learning the sums. A check is 60 pairs
  // and moves by up to 0.1 from one check to the next, so the figure is
  // the mean of the last four checks (or the check that reached 0.85).
  nlohmann::json last;
  std::vector<double> checks;
  int64_t step = 0;
  while (step < 400 && (checks.empty() || checks.back() < 0.85)) {
    for (int64_t i = 0; i < 25; ++i) last = rm.call("update", pairs(++step, false)).meta()["metrics"];
    checks.push_back(held_out(rm, "reward_model/pair_accuracy"));
  }
  const size_t recent = checks.back() >= 0.85 ? 1 : std::min<size_t>(4, checks.size());
  const double after = std::accumulate(checks.end() - recent, checks.end(), 0.0) / recent;
  std::cerr << "held-out pair accuracy " << before << " -> " << after << " after " << step
            << " steps; checks:";
  for (double c : checks) std::cerr << " " << c;
  std::cerr << "\n";
  for (const char* key : {"reward_model/loss", "reward_model/pair_accuracy", "reward_model/margin",
                          "reward_model/grad_norm", "reward_model/lr"})
    EXPECT_TRUE(last.contains(key)) << key;
  EXPECT_FALSE(last.contains("reward_model/sign_accuracy")) << "no signs were given";
  EXPECT_GE(after, 0.75);
  EXPECT_GE(after, before + 0.25);
  EXPECT_GT(held_out(rm, "reward_model/margin"), 0.0);
}

// Scores of `answers` to `prompts` by the role's `score` method.
torch::Tensor scores_of(LocalRole& model, const std::vector<nlohmann::json>& prompts,
                        const std::vector<nlohmann::json>& answers, nlohmann::json args) {
  auto* role = dynamic_cast<workers::roles::ModelRole*>(model.role.get());
  torch::Tensor mask;
  auto seq = role->text_sequences(prompts, answers, mask);
  const int64_t p = seq.input_ids.size(1) - seq.response_length;
  Batch in;
  in.set_tensor("prompt_ids", seq.input_ids.slice(1, 0, p));
  in.set_tensor("prompt_mask", seq.attention_mask.slice(1, 0, p));
  in.set_tensor("responses", seq.input_ids.slice(1, p));
  in.set_tensor("response_mask", mask);
  return model.call("score", in, {}, args).tensor("cost_scores").sum(1);
}

TEST(CostModelRole, TheSignTermMakesTheScoreTellUnsafeFromSafe) {
  LocalRole cost("cost_model", tiny_scorer_config(), "cost");
  const nlohmann::json signs = {{"chosen_sign", 1}, {"rejected_sign", -1}};
  for (int64_t step = 1; step <= 150; ++step)
    cost.call("update", safety_pairs(pairs(step, false)), {}, signs);
  EXPECT_GE(held_out(cost, "cost_model/sign_accuracy", true), 0.9);
  EXPECT_GE(held_out(cost, "cost_model/pair_accuracy", true), 0.9);

  // As a probability (args {probability: true}), the cost of a held-out
  // unsafe answer is over one half and a safe one's under.
  Batch test = pairs(0, true);
  auto unsafe =
      scores_of(cost, test.objects("prompts"), test.objects("unsafe_response"), {{"probability", true}});
  auto safe =
      scores_of(cost, test.objects("prompts"), test.objects("safe_response"), {{"probability", true}});
  EXPECT_GE((unsafe > 0.5).to(torch::kFloat32).mean().item<double>(), 0.9);
  EXPECT_GE((safe < 0.5).to(torch::kFloat32).mean().item<double>(), 0.9);
  EXPECT_TRUE((unsafe > 0).all().item<bool>() && (unsafe < 1).all().item<bool>());
  auto raw =
      scores_of(cost, test.objects("prompts"), test.objects("unsafe_response"), nlohmann::json::object());
  EXPECT_TRUE(torch::allclose(torch::sigmoid(raw), unsafe, 1e-5, 1e-6));
}

// One step over the whole batch, in micro-batches of 5, or by two ranks
// with half the rows each: the same loss, accuracy, margin and gradient
// norm, alike on both ranks, and the same weights after.
TEST(RewardModelRole, UpdateOverTwoRanksOrMicroBatchesEqualsOneRankOnTheWholeBatch) {
  auto config = tiny_scorer_config();
  config["micro_batch_size"] = 32;
  Batch in = pairs(1, false, 32);
  LocalRole single("reward_model", config, "rm");
  nlohmann::json want = single.call("update", in).meta()["metrics"];

  config["micro_batch_size"] = 5;
  LocalRole micro("reward_model", config, "rm");
  expect_same_metrics(micro.call("update", in).meta()["metrics"], want, "micro-batches of 5");

  config["micro_batch_size"] = 16;
  TwoRanks two("reward_model", config);
  auto outs = two.call_split("update", in);
  EXPECT_EQ(outs[0].meta()["metrics"].dump(), outs[1].meta()["metrics"].dump());
  expect_same_metrics(outs[0].meta()["metrics"], want, "two ranks");

  // The weights after: each held-out pair scores alike (both ranks of the
  // pair evaluate their halves, and the totals are summed over them).
  Batch test = pairs(0, true);
  auto expected = single.call("evaluate_pairs", test).meta()["metrics"];
  expect_same_metrics(micro.call("evaluate_pairs", test).meta()["metrics"], expected, "micro after");
  auto evaluated = two.call_split("evaluate_pairs", test);
  EXPECT_EQ(evaluated[0].meta()["metrics"].dump(), evaluated[1].meta()["metrics"].dump());
  expect_same_metrics(evaluated[0].meta()["metrics"], expected, "two ranks after");
}

// Online pairs (builtin.preference_pairs) mark ties with pair_weight 0:
// without signs such a row is as if it were not in the batch (the same
// metrics, and the same weights after); with signs its sign terms still
// count, so the update differs.
TEST(RewardModelRole, ARowWithPairWeightZeroLeavesOutItsPairButNotItsSigns) {
  Batch all = pairs(1, false, 32);
  std::vector<int64_t> kept;
  std::vector<float> weight;
  for (int64_t i = 0; i < all.rows(); ++i) {
    weight.push_back(i % 3 == 0 ? 0.0f : 1.0f);
    if (i % 3 != 0) kept.push_back(i);
  }
  Batch weighted = all;
  weighted.set_tensor("pair_weight", torch::tensor(weight));
  Batch only_kept = all.reorder(kept);

  LocalRole a("reward_model", tiny_scorer_config(), "rm"), b("reward_model", tiny_scorer_config(), "rm");
  auto with_weights = a.call("update", weighted).meta()["metrics"];
  expect_same_metrics(with_weights, b.call("update", only_kept).meta()["metrics"], "weight 0 = absent");
  Batch test = pairs(0, true);
  expect_same_metrics(a.call("evaluate_pairs", test).meta()["metrics"],
                      b.call("evaluate_pairs", test).meta()["metrics"], "the weights after");

  // With signs, the tied rows' sign terms count: the update's sign
  // accuracy is over all 32 rows (as the same weights evaluate them), and
  // the weights after differ from an update on the kept rows alone.
  const nlohmann::json signs = {{"chosen_sign", 1}, {"rejected_sign", -1}};
  LocalRole c("reward_model", tiny_scorer_config(), "rm"), d("reward_model", tiny_scorer_config(), "rm"),
      fresh("reward_model", tiny_scorer_config(), "rm");
  const double over_all_rows = fresh.call("evaluate_pairs", all, {}, signs)
                                   .meta()["metrics"]["reward_model/sign_accuracy"]
                                   .get<double>();
  auto signed_weighted = c.call("update", weighted, {}, signs).meta()["metrics"];
  d.call("update", only_kept, {}, signs);
  EXPECT_DOUBLE_EQ(signed_weighted["reward_model/sign_accuracy"].get<double>(), over_all_rows);
  EXPECT_DOUBLE_EQ(signed_weighted["reward_model/pair_accuracy"].get<double>(),
                   with_weights["reward_model/pair_accuracy"].get<double>());
  EXPECT_NE(c.call("evaluate_pairs", test).meta()["metrics"]["reward_model/loss"].get<double>(),
            d.call("evaluate_pairs", test).meta()["metrics"]["reward_model/loss"].get<double>());
}

TEST(RewardModelRole, ASignForOnlyOneSideOfThePairIsAnErrorThatSaysSo) {
  LocalRole rm("reward_model", tiny_scorer_config(), "rm");
  try {
    rm.call("update", pairs(1, false, 8), {}, {{"chosen_sign", 1}});
    FAIL() << "no error";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("chosen_sign and rejected_sign come together"));
  }
}

}  // namespace
}  // namespace rlwb::testing
