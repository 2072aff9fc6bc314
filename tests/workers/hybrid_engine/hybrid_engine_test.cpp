// The 3D-HybridEngine (workers/hybrid_engine/hybrid_engine.h) on ranks in
// threads, each with real c10d Gloo groups: a model sharded for training
// at tp = t, switched to generation at t_g, computes what the unsharded
// model with the same weights computes (logits within 1e-5, the same
// greedy tokens); switching back leaves every training shard bitwise where
// it was, and training goes on; and no rank holds its training shard twice.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "tests/workers/model/ranks_in_threads.h"
#include "workers/hybrid_engine/hybrid_engine.h"
#include "workers/mesh_groups.h"
#include "workers/model/flat_adamw.h"
#include "workers/model/generation.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::hybrid_engine {
namespace {

using model::Transformer;
using model::TransformerConfig;
using model::testing::expect_close;
using workers::testing::on_ranks;

// Every split kind (biases of column- and row-parallel layers), heads and
// width that divide by 4, layers that divide by 4 stages.
TransformerConfig config_of(int64_t hidden = 32, int64_t width = 80, int64_t vocab = 64) {
  TransformerConfig c = model::testing::tiny_config();
  c.num_layers = 4;
  c.qkv_bias = c.output_bias = c.mlp_bias = true;
  c.hidden_size = hidden;
  c.intermediate_size = width;
  c.vocab_size = vocab;
  c.num_heads = 4;
  c.num_kv_heads = 4;
  return c;
}

Transformer seeded(const TransformerConfig& c) {
  torch::manual_seed(11);
  return Transformer(c);
}

// One model with the seeded weights per rank, made before the ranks' threads
// start (torch's global generator is not for threads at once).
std::vector<Transformer> seeded_per_rank(const TransformerConfig& c, int ranks) {
  std::vector<Transformer> nets;
  nets.reserve(ranks);
  for (int r = 0; r < ranks; ++r) nets.push_back(seeded(c));
  return nets;
}

// Shards `net` over its layout's training TP and PP groups (which `groups`
// keeps alive).
Transformer training_shard(Transformer net, SpmdGroup& pool, const HybridLayout& layout,
                           std::shared_ptr<MeshGroups>& groups) {
  const core::Mesh mesh = layout.training_mesh();
  groups = make_mesh_groups(pool, mesh, "actor", layout.generation_mesh());
  net->shard_tensor_parallel(groups->tensor_parallel(pool.rank()));
  net->shard_pipeline_parallel(groups->pipeline_parallel(pool.rank()));
  return net;
}

struct Prompts {
  torch::Tensor ids, mask;
};
Prompts prompts_for(int64_t vocab) {
  torch::manual_seed(9);
  Prompts p{torch::randint(2, vocab, {4, 5}), torch::ones({4, 5}, torch::kInt64)};
  p.mask[1].narrow(0, 0, 3).fill_(0);  // left padding
  return p;
}

model::GenerationOptions greedy() {
  model::GenerationOptions options;
  options.sampling.greedy = true;
  options.max_new_tokens = 10;
  options.stop_token_ids = {1};
  return options;
}

struct Case {
  TrainingLayout train;
  GenerationLayout generate;
};

std::string name_of(const Case& c) {
  return "p" + std::to_string(c.train.pp) + "t" + std::to_string(c.train.tp) + "d" +
         std::to_string(c.train.dp) + "_to_p" + std::to_string(c.generate.pp) + "t" +
         std::to_string(c.generate.tp);
}
void PrintTo(const Case& c, std::ostream* os) { *os << name_of(c); }

// The generation model of `layout` (buffers backed as `options` says)
// computes the unsharded model's logits and greedy tokens.
void expect_generates_what_the_unsharded_model_computes(const HybridLayout& layout,
                                                        const HybridEngineOptions& options) {
  const TransformerConfig c = config_of();
  const Prompts prompts = prompts_for(c.vocab_size);
  Transformer reference = seeded(c);
  const torch::Tensor want_logits = reference->forward(prompts.ids, prompts.mask).detach();
  const model::GenerationResult want = model::generate(reference, prompts.ids, prompts.mask, greedy());

  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    HybridEngine engine(training_shard(nets[rank], pool, layout, groups), pool, layout, "actor", options);
    engine.to_generation();
    GenerationLayoutModel& net = engine.generation_model();
    const model::TensorParallel& tp = net.tensor_parallel();
    EXPECT_EQ(tp.size, layout.generate().tp);
    EXPECT_EQ(net.pipeline_parallel().stages, layout.generate().pp);
    torch::Tensor local = net.forward(prompts.ids, prompts.mask);
    EXPECT_EQ(local.size(-1), c.vocab_size / (layout.generate().tp * layout.generate().pp));
    expect_close(model::gather_shards(local, 2, c.vocab_size, net.vocab_parallel()), want_logits, 1e-5,
                 "logits");
    const model::GenerationResult got = net.generate(prompts.ids, prompts.mask, greedy());
    EXPECT_TRUE(torch::equal(got.responses, want.responses)) << "rank " << rank;
    EXPECT_TRUE(torch::equal(got.response_mask, want.response_mask)) << "rank " << rank;
    expect_close(got.log_probs, want.log_probs, 1e-5, "greedy log-probs");
    engine.to_training();
  });
}

class HybridEngineLayouts : public ::testing::TestWithParam<Case> {};

TEST_P(HybridEngineLayouts, GeneratesWhatTheUnshardedModelComputes) {
  expect_generates_what_the_unsharded_model_computes(HybridLayout(GetParam().train, GetParam().generate), {});
}

// The buffers a GPU gets (generation_buffer.h's kAllocated), run on the
// CPU: the same generation model over slots that moved.
class HybridEngineAllocatedLayouts : public ::testing::TestWithParam<Case> {};

TEST_P(HybridEngineAllocatedLayouts, GeneratesWhatTheUnshardedModelComputes) {
  expect_generates_what_the_unsharded_model_computes(HybridLayout(GetParam().train, GetParam().generate),
                                                     {.backing = BufferBacking::kAllocated});
}

INSTANTIATE_TEST_SUITE_P(AllocatedLayouts, HybridEngineAllocatedLayouts,
                         ::testing::Values(Case{{.tp = 2, .dp = 2}, {.tp = 1}},
                                           Case{{.tp = 2}, {.tp = 2}},  // one slot: nothing moves
                                           Case{{.pp = 2, .tp = 2}, {.pp = 1, .tp = 1}},
                                           Case{{.pp = 4}, {.pp = 2}}),
                         [](const ::testing::TestParamInfo<Case>& info) { return name_of(info.param); });

INSTANTIATE_TEST_SUITE_P(Layouts, HybridEngineLayouts,
                         ::testing::Values(Case{{.tp = 2}, {.tp = 1}},           // 2 micro-DP ranks
                                           Case{{.tp = 4}, {.tp = 2}},           // figure 8's replica
                                           Case{{.tp = 2, .dp = 2}, {.tp = 1}},  // two training replicas
                                           Case{{.tp = 2}, {.tp = 2}},           // nothing to gather
                                           // Pipeline stages: the layers of p/p_g stages gathered...
                                           Case{{.pp = 2}, {.pp = 1}},  // ...whole
                                           Case{{.pp = 2, .tp = 2},
                                                {.pp = 1, .tp = 1}},  // ...with their tp shards
                                           Case{{.pp = 2, .tp = 2}, {.pp = 1, .tp = 2}},  // ...tp kept
                                           Case{{.pp = 4}, {.pp = 2}},  // ...into 2 generation stages
                                           Case{{.pp = 2, .dp = 2}, {.pp = 1}},
                                           Case{{.pp = 2, .tp = 2}, {.pp = 2, .tp = 1}}),  // stages kept
                         [](const ::testing::TestParamInfo<Case>& info) { return name_of(info.param); });

// A loss over every parameter of the language-model path, computed on
// this rank's vocabulary columns: summed over the tp ranks it is the
// unsharded model's loss.
torch::Tensor loss_of(Transformer& net, const Prompts& p) {
  const torch::Tensor logits = net->forward(p.ids, p.mask);
  const model::Shard vocab = net->vocab_shard();
  const torch::Tensor weights =
      torch::linspace(-1.0, 1.0, net->config().vocab_size).narrow(0, vocab.start, vocab.size);
  return (logits * weights).sum();
}

// The training shard's logits, gathered over its tp ranks: the whole model's.
torch::Tensor whole_logits(Transformer& net, const Prompts& p) {
  torch::NoGradGuard no_grad;
  return model::gather_shards(net->forward(p.ids, p.mask), 2, net->config().vocab_size,
                              net->vocab_parallel());
}

TEST(HybridEngine, SwitchingBackLeavesTheTrainingShardsBitwiseInPlaceAndTrainingGoesOn) {
  const HybridLayout layout({.tp = 2}, {.tp = 1});
  const TransformerConfig c = config_of();
  const Prompts prompts = prompts_for(c.vocab_size);
  // The reference takes the same SGD step on the whole model.
  Transformer reference = seeded(c);
  torch::optim::SGD reference_sgd(reference->parameters(), torch::optim::SGDOptions(0.1));
  loss_of(reference, prompts).backward();
  reference_sgd.step();
  const torch::Tensor want_logits = reference->forward(prompts.ids, prompts.mask).detach();
  std::map<std::string, torch::Tensor> want;
  for (auto& p : reference->named_parameters()) want[p.key()] = p.value().detach();

  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    HybridEngine engine(net, pool, layout, "actor");
    std::map<std::string, torch::Tensor> before;
    std::map<std::string, const void*> where;
    for (auto& p : net->named_parameters()) {
      before[p.key()] = p.value().detach().clone();
      where[p.key()] = p.value().data_ptr();
    }
    for (int cycle = 0; cycle < 2; ++cycle) {
      engine.to_generation();
      engine.generation_model().generate(prompts.ids, prompts.mask, greedy());
      engine.to_training();
    }
    for (auto& p : net->named_parameters()) {
      EXPECT_EQ(p.value().data_ptr(), where[p.key()]) << p.key() << " moved";
      EXPECT_TRUE(torch::equal(p.value(), before[p.key()])) << p.key() << " changed";
    }
    // One training step at tp = 2 equals the reference's on this rank's slice.
    torch::optim::SGD sgd(net->parameters(), torch::optim::SGDOptions(0.1));
    loss_of(net, prompts).backward();
    sgd.step();
    for (auto& p : net->named_parameters()) {
      const int64_t dim = model::tensor_parallel_dim(p.key());
      torch::Tensor whole = want[p.key()];
      if (dim >= 0) {
        const model::Shard s = model::shard_of(whole.size(dim), rank, 2);
        whole = whole.narrow(dim, s.start, s.size);
      }
      // A step moves weights by lr x gradient, and gradients summed over tp
      // ranks differ from one process's in the last bits (tensor_parallel_test
      // allows 3e-5 for them).
      expect_close(p.value().detach(), whole, 5e-5, "after a step: " + p.key());
      EXPECT_EQ(p.value().data_ptr(), where[p.key()]) << p.key() << " was stepped out of its buffer";
    }
    // And the next switch generates with the updated weights: what the
    // training model computes with them (the updated reference differs
    // from both by the steps' last bits, amplified).
    const torch::Tensor trained_logits = whole_logits(net, prompts);
    engine.to_generation();
    expect_close(engine.generation_model().forward(prompts.ids, prompts.mask), trained_logits, 1e-5,
                 "logits after the update");
    expect_close(trained_logits, want_logits, 1e-4, "the update equals the reference's");
  });
}

// The actor's optimizer with the engine: FlatAdamW updating the shards
// where the engine keeps them, so the next switch gathers the new weights.
TEST(HybridEngine, FlatAdamWInPlaceTrainsTheShardsInTheEnginesBuffers) {
  const HybridLayout layout({.tp = 2}, {.tp = 1});
  const TransformerConfig c = config_of();
  const Prompts prompts = prompts_for(c.vocab_size);
  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    HybridEngine engine(net, pool, layout, "actor");
    std::map<std::string, const void*> where;
    std::map<std::string, torch::Tensor> before;
    for (auto& p : net->named_parameters()) {
      where[p.key()] = p.value().data_ptr();
      before[p.key()] = p.value().detach().clone();
    }
    model::FlatAdamW optimizer(net->parameters(), model::AdamWSettings{}, model::ParameterStorage::kInPlace);
    loss_of(net, prompts).backward();
    optimizer.step(1e-2);
    for (auto& p : net->named_parameters()) {
      EXPECT_EQ(p.value().data_ptr(), where[p.key()]) << p.key() << " left the engine's buffer";
      EXPECT_FALSE(torch::equal(p.value(), before[p.key()])) << p.key() << " was not updated";
    }
    const torch::Tensor trained_logits = whole_logits(net, prompts);
    engine.to_generation();
    expect_close(engine.generation_model().forward(prompts.ids, prompts.mask), trained_logits, 1e-5,
                 "generation logits after the update, rank " + std::to_string(rank));
    engine.to_training();
  });
}

TEST(HybridEngine, HoldsNoSecondCopyOfTheTrainingShard) {
  const HybridLayout layout({.tp = 4}, {.tp = 2});  // d_g = 2
  // Weights of many pages each, so that resident pages measure them.
  const TransformerConfig c = config_of(/*hidden=*/256, /*width=*/1024, /*vocab=*/1024);
  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    int64_t shard_bytes = 0, replicated_bytes = 0, buffers = 0;
    for (auto& p : net->named_parameters()) {
      if (model::tensor_parallel_dim(p.key()) >= 0) {
        shard_bytes += static_cast<int64_t>(p.value().nbytes());
        ++buffers;
      } else {
        replicated_bytes += static_cast<int64_t>(p.value().nbytes());
      }
    }
    HybridEngine engine(net, pool, layout, "actor");
    const int64_t page = 4096, slack = 2 * page * buffers;  // straddling pages (generation_buffer.h)
    auto split_bytes = [&] { return engine.resident_parameter_bytes() - replicated_bytes; };
    EXPECT_GE(split_bytes(), shard_bytes);
    EXPECT_LE(split_bytes(), shard_bytes + slack) << "training holds the shard once";
    // Every split parameter is a view of its buffer's own slot.
    for (auto& p : net->named_parameters()) {
      if (model::tensor_parallel_dim(p.key()) < 0) continue;
      const GenerationBuffer& buffer = engine.buffer_of(p.key());
      EXPECT_EQ(p.value().data_ptr(), buffer.own_slot().data_ptr()) << p.key();
    }
    engine.to_generation();
    EXPECT_GE(split_bytes(), 2 * shard_bytes - slack);
    EXPECT_LE(split_bytes(), 2 * shard_bytes + slack) << "generation holds M/t_g, the shard inside it";
    EXPECT_EQ(engine.bytes_received(), shard_bytes) << "(d_g - 1) shards received";
    for (auto& p : net->named_parameters()) {
      if (model::tensor_parallel_dim(p.key()) < 0) continue;
      const GenerationBuffer& buffer = engine.buffer_of(p.key());
      EXPECT_EQ(p.value().data_ptr(), buffer.own_slot().data_ptr()) << p.key() << " copied for generation";
    }
    engine.to_training();
    EXPECT_LE(split_bytes(), shard_bytes + slack) << "the gathered parts are given back";
  });
}

// Allocated buffers (a GPU's, here on the CPU): each switch moves the
// training shard into the gathered shard and back, the parameter follows
// it and the old storage is freed -- no second copy is left behind -- so
// the engine holds exactly M/t while training and M/t_g while generating,
// the weights come back bitwise, and an optimizer holding the parameters
// steps the moved weights.
TEST(HybridEngine, AllocatedBuffersMoveTheShardAndFreeTheOldCopyAtEachSwitch) {
  const HybridLayout layout({.tp = 4}, {.tp = 2});  // d_g = 2
  const TransformerConfig c = config_of();
  const Prompts prompts = prompts_for(c.vocab_size);
  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    int64_t shard_bytes = 0, replicated_bytes = 0;
    std::map<std::string, torch::Tensor> before;
    for (auto& p : net->named_parameters()) {
      (model::tensor_parallel_dim(p.key()) >= 0 ? shard_bytes : replicated_bytes) +=
          static_cast<int64_t>(p.value().nbytes());
      before[p.key()] = p.value().detach().clone();
    }
    HybridEngine engine(net, pool, layout, "actor", {.backing = BufferBacking::kAllocated});
    auto split_bytes = [&] { return engine.resident_parameter_bytes() - replicated_bytes; };
    EXPECT_EQ(split_bytes(), shard_bytes) << "training holds the shard once";
    // Every split parameter, as its buffer's own slot; weak references to
    // the storages it leaves.
    auto own_storages = [&] {
      std::map<std::string, c10::weak_intrusive_ptr<c10::StorageImpl>> storages;
      for (auto& p : net->named_parameters()) {
        if (model::tensor_parallel_dim(p.key()) < 0) continue;
        EXPECT_EQ(p.value().data_ptr(), engine.buffer_of(p.key()).own_slot().data_ptr()) << p.key();
        storages.emplace(p.key(), p.value().storage().getWeakStorageImpl());
      }
      return storages;
    };
    auto expect_freed = [](const auto& storages, const char* when) {
      for (const auto& [name, storage] : storages) EXPECT_TRUE(storage.expired()) << name << " " << when;
    };
    auto expect_unchanged = [&](const char* when) {
      for (auto& p : net->named_parameters())
        EXPECT_TRUE(torch::equal(p.value(), before[p.key()])) << p.key() << " " << when;
    };
    auto training = own_storages();
    engine.to_generation();
    expect_freed(training, "still held while generating");
    EXPECT_EQ(split_bytes(), 2 * shard_bytes) << "generation holds M/t_g, the shard inside it";
    expect_unchanged("after the switch to generation");
    for (auto& p : net->named_parameters()) {
      if (model::tensor_parallel_dim(p.key()) < 0) continue;
      const GenerationBuffer& buffer = engine.buffer_of(p.key());
      const auto* own = static_cast<const char*>(buffer.all_slots().data_ptr()) +
                        buffer.own_slot_index() * buffer.slot_numel() * static_cast<int64_t>(sizeof(float));
      EXPECT_EQ(p.value().data_ptr(), own) << p.key() << " is not its slot of the generation shard";
    }
    auto generating = own_storages();
    engine.generation_model().generate(prompts.ids, prompts.mask, greedy());
    engine.to_training();
    expect_freed(generating, "(the generation shard) still held after the switch back");
    EXPECT_EQ(split_bytes(), shard_bytes) << "the gathered parts are given back";
    expect_unchanged("after the switch back");
    own_storages();

    model::FlatAdamW optimizer(net->parameters(), model::AdamWSettings{}, model::ParameterStorage::kInPlace);
    loss_of(net, prompts).backward();
    optimizer.step(1e-2);
    const torch::Tensor trained_logits = whole_logits(net, prompts);
    engine.to_generation();
    GenerationLayoutModel& generation = engine.generation_model();
    expect_close(model::gather_shards(generation.forward(prompts.ids, prompts.mask), 2, c.vocab_size,
                                      generation.vocab_parallel()),
                 trained_logits, 1e-5, "generation logits after the update, rank " + std::to_string(rank));
    engine.to_training();
    // And the optimizer steps the weights where they are now.
    const torch::Tensor stepped = net->tok_embeddings->weight.detach().clone();
    loss_of(net, prompts).backward();
    optimizer.step(1e-2);
    EXPECT_FALSE(torch::equal(net->tok_embeddings->weight, stepped)) << "a moved parameter was not stepped";
  });
}

// p = 2, t = 2 generating at p_g = t_g = 1 (d_g = 4): while training a rank
// holds its training shard once; while generating, the whole model (its
// generation shard), its training shard inside it, plus a second copy of
// the blocks' norms and row-parallel biases (t/t_g = 2 copies of each).
TEST(HybridEngine, GathersTheOtherStagesLayersAndGivesThemBack) {
  const HybridLayout layout({.pp = 2, .tp = 2}, {.pp = 1, .tp = 1});
  const TransformerConfig c = config_of(/*hidden=*/256, /*width=*/1024, /*vocab=*/1024);
  int64_t whole_bytes = 0, block_vector_bytes = 0;
  {
    Transformer whole = seeded(c);
    for (auto& p : whole->named_parameters()) {
      whole_bytes += static_cast<int64_t>(p.value().nbytes());
      if (model::layer_of_parameter(p.key()) >= 0 && model::tensor_parallel_dim(p.key()) < 0)
        block_vector_bytes += static_cast<int64_t>(p.value().nbytes());
    }
  }
  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    int64_t shard_bytes = 0, tensors = 0;
    for (auto& p : net->parameters()) {
      shard_bytes += static_cast<int64_t>(p.nbytes());
      ++tensors;
    }
    HybridEngine engine(net, pool, layout, "actor");
    const int64_t page = 4096, slack = 2 * page * tensors;
    EXPECT_GE(engine.resident_parameter_bytes(), shard_bytes);
    EXPECT_LE(engine.resident_parameter_bytes(), shard_bytes + slack) << "training holds the shard once";
    engine.to_generation();
    // Every block's norms and biases come as t/t_g = 2 copies: once more than the model has.
    const int64_t extra = block_vector_bytes;
    EXPECT_GE(engine.resident_parameter_bytes(), whole_bytes + extra - slack);
    EXPECT_LE(engine.resident_parameter_bytes(), whole_bytes + extra + slack)
        << "generation holds M/(t_g p_g)";
    engine.to_training();
    EXPECT_LE(engine.resident_parameter_bytes(), shard_bytes + slack) << "the gathered parts are given back";
  });
}

// p = 4 generating at p_g = 2 (d_g = 2): each rank holds its stage's
// blocks and a quarter of the embedding's and the head's rows, so it
// receives a quarter of the model and generates with half of it --
// HybridFlow's table 2 for this layout, (tp - t_g p_g)/(t_g p_g tp) M and
// M/(t_g p_g) -- up to the final norm, which every stage holds.
TEST(HybridEngine, AtFourStagesGeneratingAtTwoEachRankReceivesAndHoldsTable2sShare) {
  const HybridLayout layout({.pp = 4}, {.pp = 2});
  TransformerConfig c = config_of(/*hidden=*/256, /*width=*/1024, /*vocab=*/1024);
  c.num_layers = 4;
  int64_t whole_bytes = 0, every_stage_bytes = 0;
  {
    Transformer whole = seeded(c);
    for (auto& p : whole->named_parameters()) {
      whole_bytes += static_cast<int64_t>(p.value().nbytes());
      if (model::layer_of_parameter(p.key()) < 0 && !model::is_vocab_parameter(p.key()))
        every_stage_bytes += static_cast<int64_t>(p.value().nbytes());
    }
  }
  const int64_t split_bytes = whole_bytes - every_stage_bytes;
  const ReshardCost table2 = hybrid_engine_cost(layout);
  std::vector<Transformer> nets = seeded_per_rank(c, layout.world());
  on_ranks(layout.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    EXPECT_EQ(net->tok_embeddings->weight.size(0), c.vocab_size / 4);
    HybridEngine engine(net, pool, layout, "actor");
    engine.to_generation();
    EXPECT_EQ(engine.bytes_received(), static_cast<int64_t>(table2.bytes_moved * split_bytes));
    const int64_t page = 4096, slack = 2 * page * static_cast<int64_t>(net->parameters().size());
    const auto held = static_cast<int64_t>(table2.peak_memory * split_bytes) + every_stage_bytes;
    EXPECT_GE(engine.resident_parameter_bytes(), held - slack);
    EXPECT_LE(engine.resident_parameter_bytes(), held + slack) << "generation holds M/(t_g p_g)";
    engine.to_training();
  });
}

// On two ranks, a model of config `c` sharded as `layout` says: making
// the engine must throw a HybridLayoutError that contains `expected`.
void expect_engine_refused(const TransformerConfig& c, const HybridLayout& layout,
                           const std::string& expected) {
  std::vector<Transformer> nets = seeded_per_rank(c, 2);
  on_ranks(2, [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups;
    Transformer net = training_shard(nets[rank], pool, layout, groups);
    try {
      HybridEngine engine(net, pool, layout, "actor");
      ADD_FAILURE() << "expected an error";
    } catch (const HybridLayoutError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  });
}

TEST(HybridEngine, RefusesFewerGenerationStagesWhenTheLayersDoNotSplitEvenly) {
  TransformerConfig c = config_of();
  c.num_layers = 3;
  expect_engine_refused(c, HybridLayout({.pp = 2}, {.pp = 1}), "'num_layers' = 3 does not divide by pp = 2");
}

TEST(HybridEngine, RefusesAModelShardedOtherwiseThanTheLayoutSays) {
  const TransformerConfig c = config_of();
  std::vector<Transformer> nets = seeded_per_rank(c, 2);
  on_ranks(2, [&](int rank, SpmdGroup& pool) {
    Transformer unsharded = nets[rank];
    try {
      HybridEngine engine(unsharded, pool, HybridLayout({.tp = 2}, {.tp = 1}), "actor");
      ADD_FAILURE() << "expected an error";
    } catch (const HybridLayoutError& e) {
      EXPECT_NE(std::string(e.what()).find("sharded as tp rank 0 of 1 but the layout puts pool rank " +
                                           std::to_string(rank)),
                std::string::npos)
          << e.what();
    }
  });
}

TEST(HybridEngine, RefusesAVocabularyThatDoesNotSplitEvenly) {
  expect_engine_refused(config_of(32, 80, /*vocab=*/63), HybridLayout({.tp = 2}, {.tp = 1}),
                        "'vocab_size' = 63 does not divide by the training pp * tp = 2");
}

}  // namespace
}  // namespace rlwb::workers::hybrid_engine
