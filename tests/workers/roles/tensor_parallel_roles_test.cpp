// The model roles on a mesh (dp x pp x tp ranks in threads over real c10d
// groups, dispatched as the controller dispatches): an actor update, the
// critic's, greedy rollouts and the saved checkpoint equal one rank's on
// the whole batch, in every layout; rows that a split adds to even out
// its chunks train nothing; and an actor that generates in its own layout
// (the 3D-HybridEngine) rolls out as one rank does.
#include "tests/workers/roles/rl_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/hf_checkpoint.h"

namespace rlwb::testing {
namespace {

using core::Batch;
using core::Mesh;

const std::vector<std::string> kGenOut = {"responses", "response_mask", "old_log_probs", "prompt_ids",
                                          "prompt_mask"};

std::string layout(const Mesh& m) {
  return "tp=" + std::to_string(m.tp) + " pp=" + std::to_string(m.pp) + " dp=" + std::to_string(m.dp);
}

// Four heads and key/value heads, so tp = 4 divides them.
nlohmann::json config_for_tp(const std::string& role) {
  auto c = tiny_actor_config(1e-2);
  c["model"]["num_heads"] = 4;
  c["model"]["num_kv_heads"] = 4;
  c["model"]["intermediate_size"] = 64;
  c["micro_batch_size"] = 32;
  if (role == "critic") {
    c.erase("rollout");
    c["ppo"] = {{"epochs", 2}, {"cliprange_value", 0.05}};
  } else {
    c["ppo"] = {{"use_kl_loss", false}, {"epochs", 2}};
  }
  return c;
}

Batch prompts(int64_t rows) {
  Batch b;
  std::vector<nlohmann::json> texts;
  for (int64_t i = 0; i < rows; ++i)
    texts.push_back(std::to_string(i % 7) + "+" + std::to_string(i % 5) + "=");
  b.set_objects("prompts", texts);
  return b;
}

// A rollout of `rows` rows with advantages, values and returns for both roles.
Batch rollout(int64_t rows) {
  LocalRole actor("actor", config_for_tp("actor"));
  Batch in = actor.call("generate", prompts(rows), kGenOut);
  torch::manual_seed(5);
  auto mask = in.tensor("response_mask").to(torch::kFloat32);
  in.set_tensor("advantages", torch::randn(mask.sizes()) * mask);
  in.set_tensor("values", torch::randn(mask.sizes()) * 0.1 * mask);
  in.set_tensor("returns", torch::randn(mask.sizes()) * mask);
  return in;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const std::string& what,
                  double tolerance = 1e-5) {
  workers::model::testing::expect_close(got, want, tolerance, what);
}

// An actor with `config` updated, scored, rolled out greedily and saved on
// each mesh equals one rank doing the same on the whole batch.
void expect_actor_equals_one_rank(const nlohmann::json& config, const std::vector<Mesh>& meshes) {
  const Batch in = rollout(32);
  LocalRole single("actor", config);
  const nlohmann::json want = single.call("update", in).meta()["metrics"];
  const torch::Tensor want_lp = single.call("log_prob", in).tensor("old_log_probs");
  const Batch want_greedy = single.call("generate", prompts(9), kGenOut, {{"greedy", true}});
  workers::model::testing::ScratchDir dir("tp-roles");
  single.call("save_checkpoint", Batch{}, {}, {{"dir", (dir.path() / "single").string()}});

  for (const Mesh& mesh : meshes) {
    SCOPED_TRACE(layout(mesh));
    MeshRanks ranks("actor", config, mesh);
    Batch out = ranks.call("update", in);
    expect_same_metrics(out.meta()["metrics"], want, layout(mesh));
    // The weights after two optimizer steps: the same log-probs (to the
    // summation-order noise of the weights below).
    expect_close(ranks.call("log_prob", in).tensor("old_log_probs"), want_lp, "log-probs after the update",
                 3e-5);
    Batch greedy = ranks.call("generate", prompts(9), kGenOut, {{"greedy", true}});
    EXPECT_TRUE(torch::equal(greedy.tensor("responses"), want_greedy.tensor("responses")));
    // From the same updated weights: the same noise as the log-probs above
    // (1.05e-5 at tp=4 with the short-row attention kernel, under 1e-5 before).
    expect_close(greedy.tensor("old_log_probs"), want_greedy.tensor("old_log_probs"), "greedy log-probs",
                 3e-5);
    const auto saved = dir.path() / layout(mesh);
    ranks.call("save_checkpoint", Batch{}, {}, {{"dir", saved.string()}});
    auto exported = workers::model::load_hf_checkpoint(saved),
         whole = workers::model::load_hf_checkpoint(dir.path() / "single");
    auto whole_params = whole->named_parameters();
    // Two AdamW steps move a weight by about lr * sign(gradient) where the
    // gradient is tiny, so summation-order noise (tensor-parallel sums,
    // pipeline micro-batches' gradients added one by one) shows up to
    // ~lr * 1e-2 = 1e-4; a missing or doubled gradient moves it by ~lr.
    for (auto& p : exported->named_parameters())
      expect_close(p.value(), whole_params[p.key()], "saved " + p.key(), 3e-4);
  }
}

// The critic likewise: its update metrics and the values after it.
void expect_critic_equals_one_rank(const nlohmann::json& config, const std::vector<Mesh>& meshes) {
  const Batch in = rollout(32);
  LocalRole single("critic", config);
  const nlohmann::json want = single.call("update", in).meta()["metrics"];
  const torch::Tensor want_values = single.call("values", in).tensor("values");
  for (const Mesh& mesh : meshes) {
    SCOPED_TRACE(layout(mesh));
    MeshRanks ranks("critic", config, mesh);
    // Explained variance is computed over each rank's own rows.
    expect_same_metrics(ranks.call("update", in).meta()["metrics"], want, layout(mesh),
                        mesh.dp > 1 ? "critic/vf_explained_var" : "");
    expect_close(ranks.call("values", in).tensor("values"), want_values, "values after the update");
  }
}

TEST(TensorParallelRoles, ActorUpdateRolloutAndCheckpointEqualOneRankInEveryLayout) {
  expect_actor_equals_one_rank(config_for_tp("actor"), {Mesh{1, 1, 2}, Mesh{1, 1, 4}, Mesh{2, 1, 2}});
}

TEST(TensorParallelRoles, CriticUpdateEqualsOneRankWithTensorAndDataParallelism) {
  expect_critic_equals_one_rank(config_for_tp("critic"), {Mesh{1, 1, 2}, Mesh{2, 1, 2}});
}

// Three layers over two stages (two and one): the stages are uneven.
nlohmann::json config_for_pp(const std::string& role, bool tied = false) {
  auto c = config_for_tp(role);
  c["model"]["num_layers"] = 3;
  c["model"]["tie_word_embeddings"] = tied;
  return c;
}

TEST(PipelineParallelRoles, ActorUpdateRolloutAndCheckpointEqualOneRankInEveryLayout) {
  expect_actor_equals_one_rank(config_for_pp("actor"), {Mesh{1, 2, 1}, Mesh{1, 2, 2}, Mesh{2, 2, 1}});
}

// A tied head: every rank's rows of the embedding are also its columns of
// the head, whose gradient every stage has, while only stage 0 reads the
// lookup: each rank's rows must step with both parts.
TEST(PipelineParallelRoles, ATiedEmbeddingStepsAlikeOnEveryStage) {
  expect_actor_equals_one_rank(config_for_pp("actor", /*tied=*/true), {Mesh{1, 2, 1}});
}

// A pipeline-parallel actor's resumable state (each rank its own file,
// the other stages' blocks empty in it) restores the same training: the
// update after a save equals the update after a load into fresh ranks.
// And an HF checkpoint loads into the stages as one rank loads it.
TEST(PipelineParallelRoles, SavedStateResumesTheSameTrainingAndACheckpointLoadsIntoTheStages) {
  const Batch in = rollout(32);
  const auto config = config_for_pp("actor");
  const Mesh mesh{1, 2, 1};
  workers::model::testing::ScratchDir dir("pp-state");
  const std::string state = (dir.path() / "state").string(), hf = (dir.path() / "hf").string();
  torch::Tensor after_save;
  {
    MeshRanks ranks("actor", config, mesh);
    ranks.call("update", in);
    ranks.call("save_state", Batch{}, {}, {{"dir", state}});
    ranks.call("save_checkpoint", Batch{}, {}, {{"dir", hf}});
    ranks.call("update", in);
    after_save = ranks.call("log_prob", in).tensor("old_log_probs");
  }
  MeshRanks resumed("actor", config, mesh);
  resumed.call("load_state", Batch{}, {}, {{"dir", state}});
  resumed.call("update", in);
  expect_close(resumed.call("log_prob", in).tensor("old_log_probs"), after_save, "log-probs after resuming",
               1e-6);

  LocalRole single("actor", config);
  single.call("load_checkpoint", Batch{}, {}, {{"dir", hf}});
  MeshRanks loaded("actor", config, mesh);
  loaded.call("load_checkpoint", Batch{}, {}, {{"dir", hf}});
  expect_close(loaded.call("log_prob", in).tensor("old_log_probs"),
               single.call("log_prob", in).tensor("old_log_probs"), "log-probs of a loaded checkpoint");
}

// With stages the embedding's and the head's rows are split over the
// replica's ranks in the order its generation layout needs
// (workers/mesh_groups.h): at pp 2 x tp 2, generating at pp 1 x tp 2
// swaps ranks 1's and 2's shares. A state saved in one order is refused by
// ranks holding the other (same shapes: it would load into the wrong rows).
TEST(PipelineParallelRoles, AStateSavedForAnotherVocabularyOrderIsRefused) {
  auto config = config_for_pp("actor");
  config["model"]["num_layers"] = 4;   // the engine gathers equal runs of layers...
  config["model"]["vocab_size"] = 20;  // ...and equal shares of the vocabulary
  const Mesh mesh{1, 2, 2};
  workers::model::testing::ScratchDir dir("pp-share");
  const std::string state = (dir.path() / "state").string();
  {
    MeshRanks ranks("actor", config, mesh);
    ranks.call("save_state", Batch{}, {}, {{"dir", state}});
  }
  MeshRanks generating("actor", config, mesh, "cpu", core::generation_mesh(mesh, 1, 2));
  try {
    generating.call("load_state", Batch{}, {}, {{"dir", state}});
    FAIL() << "a state of another vocabulary order was loaded";
  } catch (const std::exception& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("rank 1: models.m rank 1: " + state +
                        "/rank-1.pt holds vocabulary share 1 of 4 but "
                        "this rank holds share 2 of 4"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("resume with the graph file the run was started with"), std::string::npos) << what;
    EXPECT_EQ(what.find("rank 0:"), std::string::npos) << "rank 0 keeps its share: " << what;
  }
}

TEST(PipelineParallelRoles, CriticUpdateEqualsOneRank) {
  expect_critic_equals_one_rank(config_for_pp("critic"), {Mesh{1, 2, 1}, Mesh{1, 2, 2}});
}

// 31 rows over 2 ranks and 30 over 4: the split repeats rows to even out the
// chunks. Those copies must not train (nor count in a loss or metric), so
// the update equals one rank's over the real rows.
TEST(DataParallelPadding, RowsAddedToEvenOutTheSplitTrainNothing) {
  const Batch all = rollout(32);
  const auto config = config_for_tp("actor");
  for (auto [rows, dp] : {std::pair<int64_t, int>{31, 2}, {30, 4}}) {
    SCOPED_TRACE(std::to_string(rows) + " rows over dp=" + std::to_string(dp));
    const Batch in = all.slice(0, rows);
    EXPECT_GT(core::plan_dispatch(core::DispatchMode::split_dp_mesh, Mesh{dp, 1, 1}, in).padded_rows, 0);
    LocalRole single("actor", config);
    const nlohmann::json want = single.call("update", in).meta()["metrics"];
    MeshRanks ranks("actor", config, Mesh{dp, 1, 1});
    expect_same_metrics(ranks.call("update", in).meta()["metrics"], want, "padded split");
    expect_close(ranks.call("log_prob", in).tensor("old_log_probs"),
                 single.call("log_prob", in).tensor("old_log_probs"), "log-probs after the update");
  }
}

TEST(TensorParallelRoles, ALayoutTheModelCannotSplitIsRefusedWithTheSetting) {
  auto config = config_for_tp("actor");
  config["model"]["num_kv_heads"] = 2;
  try {
    MeshRanks ranks("actor", config, Mesh{1, 1, 4});
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("'num_kv_heads' = 2"), std::string::npos) << e.what();
  }
}

// The actor training at p-t and generating at p_g-t_g through the
// 3D-HybridEngine, dispatched over the generation replicas as the
// controller does: greedy rollouts equal one rank's before and after an
// update (so the switch gathers the updated shards), the update trains as
// without the engine, and a checkpoint load gives the engine the new
// weights.
TEST(HybridEngineRoles, AnActorGeneratingInItsOwnLayoutMatchesOneRankBeforeAndAfterAnUpdate) {
  const Batch in = rollout(32);
  auto config = config_for_tp("actor");
  config["model"]["vocab_size"] = 20;  // the engine gathers equal shards: 4 of 5 ids
  config["model"]["num_layers"] = 2;   // one a stage at pp = 2
  LocalRole single("actor", config);
  const Batch greedy_before = single.call("generate", prompts(9), kGenOut, {{"greedy", true}});
  const nlohmann::json want = single.call("update", in).meta()["metrics"];
  const Batch greedy_after = single.call("generate", prompts(9), kGenOut, {{"greedy", true}});
  workers::model::testing::ScratchDir dir("hybrid-roles");
  single.call("save_checkpoint", Batch{}, {}, {{"dir", (dir.path() / "single").string()}});
  // (training mesh, generation mesh {dp, pp, tp, pp_fold, tp_fold}):
  // t=4 -> t_g=2; t=2 -> t_g=1; t=2, d=2 -> t_g=1; then with stages:
  // p=2 -> p_g=1; p=2, t=2 -> p_g=1, t_g=1 (d_g = 4); p=2, t=2 -> p_g=2,
  // t_g=1 (the generation hands stage to stage); p=2, t=2 -> p_g=1, t_g=2
  // (fewer stages with tp kept: the replicas {0, 1} and {2, 3} are no
  // stride apart).
  for (auto [train, generate] : {std::pair{Mesh{1, 1, 4}, Mesh{2, 1, 2, 1, 2}},
                                 {Mesh{1, 1, 2}, Mesh{2, 1, 1, 1, 2}},
                                 {Mesh{2, 1, 2}, Mesh{4, 1, 1, 1, 2}},
                                 {Mesh{1, 2, 1}, Mesh{2, 1, 1, 2, 1}},
                                 {Mesh{1, 2, 2}, Mesh{4, 1, 1, 2, 2}},
                                 {Mesh{1, 2, 2}, Mesh{2, 2, 1, 1, 2}},
                                 {Mesh{1, 2, 2}, Mesh{2, 1, 2, 2, 1}}}) {
    ASSERT_EQ(core::generation_mesh(train, generate.pp, generate.tp), generate) << "the controller's mesh";
    SCOPED_TRACE(layout(train) + " generating at pp=" + std::to_string(generate.pp) +
                 " tp=" + std::to_string(generate.tp));
    MeshRanks ranks("actor", config, train, "cpu", generate);
    Batch greedy = ranks.call("generate", prompts(9), kGenOut, {{"greedy", true}});
    EXPECT_TRUE(torch::equal(greedy.tensor("responses"), greedy_before.tensor("responses")));
    expect_close(greedy.tensor("old_log_probs"), greedy_before.tensor("old_log_probs"), "greedy log-probs");
    expect_same_metrics(ranks.call("update", in).meta()["metrics"], want, layout(train));
    greedy = ranks.call("generate", prompts(9), kGenOut, {{"greedy", true}});
    EXPECT_TRUE(torch::equal(greedy.tensor("responses"), greedy_after.tensor("responses")))
        << "generation after the update does not see the updated weights";
    expect_close(greedy.tensor("old_log_probs"), greedy_after.tensor("old_log_probs"),
                 "log-probs after update", 1e-4);
    // Sampling: each generation replica samples its own rows, every row once.
    Batch sampled = ranks.call("generate", prompts(9), kGenOut);
    EXPECT_EQ(sampled.tensor("responses").size(0), 9);
    // A checkpoint load replaces the network: the engine must hold the new one.
    ranks.call("load_checkpoint", Batch{}, {}, {{"dir", (dir.path() / "single").string()}});
    greedy = ranks.call("generate", prompts(9), kGenOut, {{"greedy", true}});
    EXPECT_TRUE(torch::equal(greedy.tensor("responses"), greedy_after.tensor("responses")));
  }
}

}  // namespace
}  // namespace rlwb::testing
