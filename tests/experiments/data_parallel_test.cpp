// Data-parallel training through the pool's c10d group: the same global
// batches trained with dp=1 and dp=2 give the same weights (fp32
// tolerance), because each rank normalises its loss by the global count and
// the gradients are summed over the ranks before clipping and AdamW. And
// tensor-parallel training in two worker processes (tp=2: each holds half
// of every layer, docs/model.md) saves the same weights again, and so does
// pipeline-parallel training (pp=2: each holds one of the two layers).
#include "core/controller/controller.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "workers/model/hf_checkpoint.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace rlwb::core;

namespace {

std::string train_sft(int dp, int tp = 1, int pp = 1) {
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-dp-logs");
  o.checkpoint_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-dp-ckpt");
  std::string d = std::to_string(dp);
  Experiment exp = load_experiment_file(
      std::string(rlwb::testing::kSourceDir) + "/experiments/sft.yaml",
      {"trainer.steps=4", "~trainer.eval", "pools.train.workers=" + std::to_string(dp * tp * pp),
       "models.actor.parallel.dp=" + d, "models.actor.parallel.tp=" + std::to_string(tp),
       "models.actor.parallel.pp=" + std::to_string(pp), "task.batch_size=32",
       "models.actor.config.micro_batch_size=8"});
  Controller controller(exp, o, nullptr);
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "finished") << result.error;
  return result.checkpoints.at("actor");
}

TEST(DataParallel, Dp1AndDp2GiveTheSameWeights) {
  auto one = rlwb::workers::model::load_hf_checkpoint(train_sft(1));
  auto two = rlwb::workers::model::load_hf_checkpoint(train_sft(2));
  auto p1 = one->named_parameters(), p2 = two->named_parameters();
  ASSERT_EQ(p1.size(), p2.size());
  double worst = 0;
  for (auto& item : p1) worst = std::max(worst, (item.value() - p2[item.key()]).abs().max().item<double>());
  EXPECT_LT(worst, 1e-5);
  // And training did move the weights away from their seeded start (the
  // comparison above is not vacuous).
  torch::manual_seed(1);
  rlwb::workers::model::Transformer start(one->config());
  EXPECT_GT((one->tok_embeddings->weight - start->tok_embeddings->weight).abs().max().item<double>(), 1e-4);
}

double largest_difference(const std::string& a, const std::string& b) {
  auto one = rlwb::workers::model::load_hf_checkpoint(a);
  auto two = rlwb::workers::model::load_hf_checkpoint(b);
  auto p1 = one->named_parameters(), p2 = two->named_parameters();
  EXPECT_EQ(p1.size(), p2.size());
  double worst = 0;
  for (auto& item : p1) worst = std::max(worst, (item.value() - p2[item.key()]).abs().max().item<double>());
  return worst;
}

TEST(TensorParallel, Tp2InTwoWorkerProcessesSavesTheWeightsOfOneProcess) {
  // Four AdamW steps: where a gradient is tiny its update is about lr *
  // sign, so summation-order noise can show up to ~lr * 1e-3 there.
  EXPECT_LT(largest_difference(train_sft(1), train_sft(1, 2)), 1e-4);
}

TEST(PipelineParallel, Pp2InTwoWorkerProcessesSavesTheWeightsOfOneProcess) {
  EXPECT_LT(largest_difference(train_sft(1), train_sft(1, 1, 2)), 1e-4);
}

}  // namespace
