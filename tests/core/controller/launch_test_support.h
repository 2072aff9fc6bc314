// What the launch tests share: a short data-parallel SFT run placed by a
// launch file, and the comparison of its result with the same run on this
// host (weights and losses), so that "trains as on one host" means one
// thing in every launch test.
#pragma once

#include "core/config/launch_options.h"
#include "core/controller/controller.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "workers/model/hf_checkpoint.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <filesystem>
#include <fstream>
#include <stop_token>

namespace rlwb::testing {

// A launch file with this text, read and checked against the SFT pool.
inline core::config::LaunchOptions launch_file(const std::string& text, int workers = 2) {
  auto path = std::filesystem::temp_directory_path() / unique_name("rlwb-launch.yaml");
  std::ofstream(path) << text;
  return core::config::read_launch_file(path.string(), {{"train", workers}});
}

// SFT for `steps` steps with a pool of two data-parallel ranks.
inline core::RunResult train_sft(const core::config::LaunchOptions& launch, int steps = 4,
                                 std::stop_token stop = {}, const std::vector<std::string>& extra = {}) {
  core::ControllerOptions o = app::controller_options();
  o.worker_binary = kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / unique_name("rlwb-launch-logs");
  o.checkpoint_dir = std::filesystem::temp_directory_path() / unique_name("rlwb-launch-ckpt");
  o.launch = launch;
  o.stop = stop;
  std::vector<std::string> overrides = {"trainer.steps=" + std::to_string(steps),
                                        "~trainer.eval",
                                        "pools.train.workers=2",
                                        "models.actor.parallel.dp=2",
                                        "task.batch_size=32",
                                        "models.actor.config.micro_batch_size=8"};
  overrides.insert(overrides.end(), extra.begin(), extra.end());
  core::Experiment exp =
      core::load_experiment_file(std::string(kSourceDir) + "/experiments/sft.yaml", overrides);
  core::Controller controller(exp, o, nullptr);
  return controller.run();
}

// Bytes of the saved actor's parameters.
inline long long parameter_bytes(const core::RunResult& run) {
  auto model = workers::model::load_hf_checkpoint(run.checkpoints.at("actor"));
  long long bytes = 0;
  for (auto& item : model->named_parameters())
    bytes += item.value().numel() * static_cast<long long>(item.value().element_size());
  return bytes;
}

// The two runs saved the same actor (within 1e-6) and logged the same
// losses at every step.
inline void expect_same_training(const core::RunResult& a, const core::RunResult& b) {
  auto one = workers::model::load_hf_checkpoint(a.checkpoints.at("actor"));
  auto two = workers::model::load_hf_checkpoint(b.checkpoints.at("actor"));
  auto p1 = one->named_parameters(), p2 = two->named_parameters();
  ASSERT_EQ(p1.size(), p2.size());
  double worst = 0;
  for (auto& item : p1) worst = std::max(worst, (item.value() - p2[item.key()]).abs().max().item<double>());
  EXPECT_LT(worst, 1e-6) << "the runs trained differently";
  ASSERT_EQ(a.steps.size(), b.steps.size());
  int losses = 0;
  for (size_t i = 0; i < b.steps.size(); ++i)
    for (const auto& [key, value] : b.steps[i].metrics)
      if (key.find("loss") != std::string::npos) {
        ++losses;
        EXPECT_NEAR(a.steps[i].metrics.at(key), value, 1e-6) << key << " at step " << i;
      }
  EXPECT_GT(losses, 0) << "no loss metric to compare";
}

}  // namespace rlwb::testing
