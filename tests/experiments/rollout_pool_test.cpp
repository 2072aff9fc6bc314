// Generation on a pool of its own (experiments/grpo_rollout_pool.yaml) run
// by the controller on real worker processes, small: the actor trains at
// tp = 2 on one pool, model `rollout` samples on another, and after every
// step the actor's shards reach it -- the rollout's log-probs of its own
// samples equal the actor's recomputation to rounding at every step (one
// update behind they differ by 0.7-2.8 nats at the token that moved most:
// measured by skipping the per-step stream), and each stream carries the
// whole model.
#include "core/controller/controller.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

using namespace rlwb::core;

namespace {

TEST(RolloutPool, TheRolloutModelSamplesWithTheActorsWeightsOfEveryStep) {
  Experiment exp = load_experiment_file(
      std::string(rlwb::testing::kSourceDir) + "/experiments/grpo_rollout_pool.yaml",
      {"trainer.steps=4", "trainer.warm_start.steps=20", "~trainer.eval", "~trainer.save", "~trainer.samples",
       "task.batch_size=16", "models.actor.config.ppo.mini_batch_size=128"});
  for (auto& i : validate_experiment(exp, rlwb::app::catalog())) ADD_FAILURE() << i.to_string();
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-rollout-pool-logs");
  o.checkpoint_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-rollout-pool");
  RunResult result = Controller(exp, o, nullptr).run();
  ASSERT_EQ(result.status, "finished") << result.error;
  ASSERT_EQ(result.steps.size(), 4u);
  // The model (hidden 128, MLP 256, 2 layers, vocabulary of the char
  // tokenizer) in float32, received whole by the rollout's one rank.
  const double first_mib = result.steps.front().metrics.at("weight_stream/received_mib");
  EXPECT_GT(first_mib, 1.0);
  for (const auto& step : result.steps) {
    SCOPED_TRACE("step " + std::to_string(step.step));
    EXPECT_LE(step.metrics.at("rollout/log_prob_diff/max"), 1e-4);
    EXPECT_EQ(step.metrics.at("weight_stream/tensors"), 21);  // every parameter: none is frozen
    EXPECT_EQ(step.metrics.at("weight_stream/received_mib"), first_mib);
    EXPECT_GT(step.metrics.at("timing_s/weight_stream"), 0);
    EXPECT_LT(step.metrics.at("timing_s/weight_stream"), step.metrics.at("perf/time_per_step"));
  }
}

}  // namespace
