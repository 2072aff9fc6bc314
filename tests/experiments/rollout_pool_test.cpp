// Generation on a pool of its own (experiments/grpo_rollout_pool.yaml) run
// by the controller on real worker processes, small: the actor trains at
// tp = 2 on one pool, model `rollout` samples on another, and after every
// step the actor's shards reach it -- the rollout's log-probs of its own
// samples equal the actor's recomputation to rounding at every step (one
// update behind they differ by 0.7-2.8 nats at the token that moved most:
// measured by skipping the per-step stream), and each stream carries the
// whole model. A run stopped after a checkpoint resumes in new worker
// processes with a new link, and the rollout again samples with the
// actor's weights.
#include "core/controller/controller.h"
#include "core/controller/resume.h"
#include "core/tracking/tracking.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

using namespace rlwb::core;

namespace {

// grpo_rollout_pool.yaml, small: 4 steps of 16 prompts after 20 warm-start steps.
Experiment small_run(std::vector<std::string> more = {}) {
  std::vector<std::string> overrides = {"trainer.steps=4",
                                        "trainer.warm_start.steps=20",
                                        "~trainer.eval",
                                        "~trainer.save",
                                        "~trainer.samples",
                                        "task.batch_size=16",
                                        "models.actor.config.ppo.mini_batch_size=128"};
  overrides.insert(overrides.end(), more.begin(), more.end());
  Experiment exp = load_experiment_file(
      std::string(rlwb::testing::kSourceDir) + "/experiments/grpo_rollout_pool.yaml", overrides);
  for (auto& i : validate_experiment(exp, rlwb::app::catalog())) ADD_FAILURE() << i.to_string();
  return exp;
}

ControllerOptions options() {
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-rollout-pool-logs");
  o.checkpoint_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-rollout-pool");
  return o;
}

TEST(RolloutPool, TheRolloutModelSamplesWithTheActorsWeightsOfEveryStep) {
  RunResult result = Controller(small_run(), options(), nullptr).run();
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

TEST(RolloutPool, ARunStoppedAfterACheckpointResumesWithTheRolloutFollowingTheActor) {
  const Experiment exp = small_run({"+trainer.checkpoint.every=2"});
  const std::string db =
      (std::filesystem::temp_directory_path() / (rlwb::testing::unique_name("rlwb-rollout-pool") + ".db"))
          .string();
  TrackingWriter tracking(db);
  std::stop_source stop;
  ControllerOptions first = options();
  first.stop = stop.get_token();
  first.hooks.step_done = [&](const StepReport& report, const std::optional<EvalReport>&) {
    if (report.step == 2) stop.request_stop();  // after step 2's checkpoint
  };
  const RunResult stopped = Controller(exp, first, &tracking).run();
  ASSERT_EQ(stopped.status, "interrupted") << stopped.error;
  ASSERT_EQ(stopped.steps.size(), 2u);

  ControllerOptions again = options();
  {
    TrackingReader reader(db);
    again.resume = plan_resume(reader, resumable_run(reader, stopped.run_id, db), exp);
  }
  ASSERT_EQ(again.resume->checkpoint.manifest.step, 2);
  const RunResult resumed = Controller(exp, again, &tracking).run();
  ASSERT_EQ(resumed.status, "finished") << resumed.error;
  ASSERT_EQ(resumed.steps.size(), 2u);
  for (const auto& step : resumed.steps) {
    SCOPED_TRACE("resumed step " + std::to_string(step.step));
    EXPECT_GE(step.step, 3);
    EXPECT_LE(step.metrics.at("rollout/log_prob_diff/max"), 1e-4);
    EXPECT_EQ(step.metrics.at("weight_stream/tensors"), 21);
  }
}

}  // namespace
