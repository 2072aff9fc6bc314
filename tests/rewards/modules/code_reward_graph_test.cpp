// experiments/grpo_code.yaml run by core::Controller on real worker
// processes, small: the code reward node starts its own rlwb-sandbox
// service, scores every sampled program by what the sandbox says, puts the
// score on the last response token, reports its metrics, and leaves no
// service behind when the run ends. The file also passes `rlwb validate`.
#include "core/controller/controller.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <torch/torch.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <regex>

using namespace rlwb::core;
namespace fs = std::filesystem;

namespace {

const std::string kFile = std::string(rlwb::testing::kSourceDir) + "/experiments/grpo_code.yaml";

std::string temp_path(const std::string& stem) {
  static int counter = 0;
  return (fs::temp_directory_path() /
          (stem + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++)))
      .string();
}

std::vector<fs::path> code_reward_dirs() {
  std::vector<fs::path> dirs;
  const std::string prefix = "rlwb-code-reward-" + std::to_string(getpid()) + "-";
  for (const auto& e : fs::directory_iterator(fs::temp_directory_path()))
    if (e.path().filename().string().rfind(prefix, 0) == 0) dirs.push_back(e.path());
  return dirs;
}

TEST(GrpoCodeGraph, PassesTheValidator) {
  FILE* p = popen((std::string(rlwb::testing::kCliBin) + " validate " + kFile + " 2>&1").c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(pclose(p), 0) << out;
  EXPECT_NE(out.find(": ok"), std::string::npos) << out;
}

TEST(GrpoCodeGraph, RewardNodeScoresEverySampleInTheSandboxAndStopsItsServiceAfter) {
  ASSERT_TRUE(fs::exists(rlwb::testing::kWorkerBin))
      << "build rlwb-worker first (ninja -C build rlwb-worker)";
  Experiment exp = load_experiment_file(
      kFile, {"trainer.steps=1", "trainer.warm_start.steps=80", "task.batch_size=4",
              "models.actor.config.ppo.mini_batch_size=0", "~trainer.eval", "~trainer.save"});
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = temp_path("rlwb-code-graph-logs");
  o.checkpoint_dir = temp_path("rlwb-code-graph-ckpt");
  RunResult result;
  {
    Controller controller(exp, o, nullptr);
    result = controller.run();
  }
  EXPECT_TRUE(code_reward_dirs().empty()) << "the code reward's sandbox service outlived the run";
  fs::remove_all(o.log_dir);
  fs::remove_all(o.checkpoint_dir);
  ASSERT_EQ(result.status, "finished") << result.error;
  ASSERT_EQ(result.steps.size(), 1u);

  const Batch& b = result.steps[0].batch;
  ASSERT_EQ(b.rows(), 4 * 8);
  auto scores = b.tensor("token_level_scores");
  auto lengths = b.tensor("response_mask").to(torch::kInt64).sum(1);
  const auto& texts = b.objects("response_text");
  const auto& prompts = b.objects("prompts");
  const auto& details = b.objects("reward_details");
  int literal_programs = 0;
  for (int64_t i = 0; i < b.rows(); ++i) {
    float row = scores[i].sum().item<float>();
    int64_t last = std::max<int64_t>(lengths[i].item<int64_t>() - 1, 0);
    EXPECT_EQ(scores[i][last].item<float>(), row)
        << "row " << i << ": the score is not on the last response token";
    std::string verdict = details[i]["verdict"];
    EXPECT_EQ(row, verdict == "ok" ? 1.0f : 0.0f) << texts[i] << " " << details[i];
    // A program that prints the target literally must pass; one that prints
    // another literal number must not.
    std::smatch m;
    std::string text = texts[i];
    if (std::regex_match(text, m, std::regex("print\\(([0-9]+)\\)"))) {
      ++literal_programs;
      bool same = std::stoll(m[1].str()) == std::stoll(prompts[i].get<std::string>());
      EXPECT_EQ(verdict, same ? "ok" : "wrong_answer") << text << " for " << prompts[i];
    }
  }
  EXPECT_GT(literal_programs, 0) << "the warm-started actor wrote no print(<number>) program to cross-check";
  auto& metrics = result.steps[0].metrics;
  ASSERT_TRUE(metrics.count("reward/reward/mean"));
  EXPECT_NEAR(metrics.at("reward/reward/mean"), scores.sum().item<double>() / b.rows(), 1e-6);
  EXPECT_GE(metrics.at("reward/reward/programs_run"), 1);
  EXPECT_LE(metrics.at("reward/reward/programs_run"), b.rows());
}

}  // namespace
