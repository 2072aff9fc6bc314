// The model roles on a GPU (a pool with device: cuda): the model, its
// optimizer state and the batches live there, and an actor computes what
// it computes on the CPU; with two GPUs, tensor parallelism over NCCL
// matches one GPU. Skipped, with the reason, where LibTorch sees no GPU;
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

Batch rollout_of(LocalRole& actor) {
  Batch prompts;
  prompts.set_objects("prompts", std::vector<nlohmann::json>(16, "3+4="));
  Batch in = actor.call("generate", prompts, kGenOut);
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
  Batch greedy = gpu.call("generate", in, kGenOut, {{"greedy", true}});
  EXPECT_EQ(greedy.tensor("responses").size(0), 16);
}

TEST(CudaRoles, TensorParallelOverNcclMatchesOneGpu) {
  if (torch::cuda::device_count() < 2)
    GTEST_SKIP() << "NCCL tensor parallelism needs two GPUs; this machine has "
                 << torch::cuda::device_count();
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

}  // namespace
}  // namespace rlwb::testing
