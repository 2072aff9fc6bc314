// The model roles on a GPU (a pool with device: cuda): the model, its
// optimizer state and the batches live there, and an actor computes what
// it computes on the CPU; tensor parallelism and the 3D-HybridEngine over
// two ranks match one rank -- over NCCL with two GPUs, through host copies
// over Gloo where the two ranks share one GPU (spmd_group.h). Skipped, with
// the reason, where LibTorch sees no GPU;
// scripts/device_check.sh runs them where one is.
#include "tests/workers/roles/rl_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "workers/roles/model_setup.h"

namespace rlwb::testing {
namespace {

using core::Batch;

const std::vector<std::string> kGenOut = {"responses", "response_mask", "old_log_probs", "prompt_ids",
                                          "prompt_mask"};

workers::WorkerEnv on_gpu() {
  workers::WorkerEnv env;
  env.device = "cuda";
  return env;
}

Batch prompts() {
  Batch prompts;
  prompts.set_objects("prompts", std::vector<nlohmann::json>(16, "3+4="));
  return prompts;
}

Batch rollout_of(LocalRole& actor) {
  Batch in = actor.call("generate", prompts(), kGenOut);
  torch::manual_seed(5);
  in.set_tensor("advantages", torch::randn({16, 3}) * in.tensor("response_mask").to(torch::kFloat32));
  return in;
}

using workers::model::testing::expect_close;

TEST(CudaRoles, AnActorOnAGpuComputesWhatItComputesOnTheCpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "LibTorch sees no GPU on this machine";
  auto config = tiny_actor_config(1e-2);
  config["ppo"] = {{"use_kl_loss", false}, {"epochs", 1}};
  LocalRole cpu("actor", config);
  LocalRole gpu("actor", config, "m", on_gpu());
  auto& model = dynamic_cast<workers::roles::ModelRole&>(*gpu.role);
  EXPECT_TRUE(model.net->tok_embeddings->weight.is_cuda());
  const Batch in = rollout_of(cpu);
  expect_close(gpu.call("log_prob", in).tensor("old_log_probs"),
               cpu.call("log_prob", in).tensor("old_log_probs"), 1e-4, "log-probs before the update");
  const nlohmann::json want = cpu.call("update", in).meta()["metrics"];
  const nlohmann::json got = gpu.call("update", in).meta()["metrics"];
  for (auto& [key, value] : want.items())
    EXPECT_NEAR(got.at(key).get<double>(), value.get<double>(), 1e-3) << key;
  expect_close(gpu.call("log_prob", in).tensor("old_log_probs"),
               cpu.call("log_prob", in).tensor("old_log_probs"), 1e-3, "log-probs after the update");
  Batch greedy = gpu.call("generate", prompts(), kGenOut, {{"greedy", true}});
  EXPECT_EQ(greedy.tensor("responses").size(0), 16);
}

// The collectives' path, for the test's name in the log.
std::string collectives_path() {
  return torch::cuda::device_count() >= 2 ? "NCCL (two GPUs)" : "host copies over Gloo (one GPU, shared)";
}

TEST(CudaRoles, TensorParallelOnGpusMatchesOneGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "LibTorch sees no GPU on this machine";
  RecordProperty("collectives", collectives_path());
  auto config = tiny_actor_config(1e-2);
  config["model"]["num_heads"] = 4;
  config["model"]["num_kv_heads"] = 2;
  config["ppo"] = {{"use_kl_loss", false}, {"epochs", 1}};
  LocalRole one("actor", config, "m", on_gpu());
  const Batch in = rollout_of(one);
  const nlohmann::json want = one.call("update", in).meta()["metrics"];
  MeshRanks two("actor", config, core::Mesh{1, 1, 2}, "cuda");
  const nlohmann::json got = two.call("update", in).meta()["metrics"];
  for (auto& [key, value] : want.items())
    EXPECT_NEAR(got.at(key).get<double>(), value.get<double>(), 1e-4) << key;
  expect_close(two.call("log_prob", in).tensor("old_log_probs"),
               one.call("log_prob", in).tensor("old_log_probs"), 1e-4, "log-probs after the update");
}

// The 3D-HybridEngine on GPUs (allocated buffers, the gather over NCCL or
// the host): an actor training at tp = 2 and generating at tp = 1 (two
// micro-DP ranks) greedily generates what one rank does, before and after
// an update.
TEST(CudaRoles, TheHybridEngineOnGpusGeneratesAsOneGpuBeforeAndAfterAnUpdate) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "LibTorch sees no GPU on this machine";
  RecordProperty("collectives", collectives_path());
  auto config = tiny_actor_config(1e-2);
  config["model"]["num_heads"] = 4;
  config["model"]["num_kv_heads"] = 2;
  config["model"]["vocab_size"] = 20;  // the engine gathers equal shards
  config["ppo"] = {{"use_kl_loss", false}, {"epochs", 1}};
  LocalRole one("actor", config, "m", on_gpu());
  const Batch in = rollout_of(one);
  const Batch greedy_before = one.call("generate", prompts(), kGenOut, {{"greedy", true}});
  const nlohmann::json want = one.call("update", in).meta()["metrics"];
  const Batch greedy_after = one.call("generate", prompts(), kGenOut, {{"greedy", true}});
  MeshRanks two("actor", config, core::Mesh{1, 1, 2}, "cuda", core::Mesh{2, 1, 1, 1, 2});
  Batch greedy = two.call("generate", prompts(), kGenOut, {{"greedy", true}});
  EXPECT_TRUE(torch::equal(greedy.tensor("responses").cpu(), greedy_before.tensor("responses").cpu()));
  const nlohmann::json got = two.call("update", in).meta()["metrics"];
  for (auto& [key, value] : want.items())
    EXPECT_NEAR(got.at(key).get<double>(), value.get<double>(), 1e-4) << key;
  greedy = two.call("generate", prompts(), kGenOut, {{"greedy", true}});
  EXPECT_TRUE(torch::equal(greedy.tensor("responses").cpu(), greedy_after.tensor("responses").cpu()))
      << "generation after the update does not see the updated weights";
  expect_close(greedy.tensor("old_log_probs"), greedy_after.tensor("old_log_probs"), 1e-4,
               "greedy log-probs after the update");
}

}  // namespace
}  // namespace rlwb::testing
