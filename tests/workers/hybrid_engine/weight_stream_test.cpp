// Generation on a pool of its own (workers/hybrid_engine/weight_stream.h):
// training ranks holding tp shards stream the weights, in buckets small
// enough that tensors span several, to generation ranks that start from
// other weights; afterwards every generation rank holds the trained model
// bitwise. With only_changed, a stream after one tensor moved sends that
// tensor alone. On a GPU (skipped without one) the weights go from device
// to device through the host buckets.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <stdexcept>

#include "tests/workers/model/model_test_support.h"
#include "tests/workers/model/ranks_in_threads.h"
#include "workers/hybrid_engine/weight_stream.h"
#include "workers/model/tensor_parallel.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::hybrid_engine {
namespace {

using model::Transformer;
using model::TransformerConfig;
using workers::testing::on_ranks;

TransformerConfig config_of() {
  TransformerConfig c = model::testing::tiny_config();
  c.qkv_bias = c.output_bias = c.mlp_bias = true;
  c.num_heads = 4;
  c.num_kv_heads = 2;
  c.vocab_size = 63;  // uneven over tp = 2
  return c;
}

Transformer seeded(const TransformerConfig& c, int seed) {
  torch::manual_seed(seed);
  return Transformer(c);
}

int64_t parameter_bytes(Transformer& net) {
  int64_t bytes = 0;
  for (auto& p : net->parameters()) bytes += p.numel() * 4;
  return bytes;
}

// The "trained" weights: the seeded start moved by seeded noise.
Transformer trained(const TransformerConfig& c) {
  Transformer net = seeded(c, 11);
  torch::manual_seed(12);
  torch::NoGradGuard no_grad;
  for (auto& p : net->parameters()) p.add_(torch::randn(p.sizes()) * 0.01);
  return net;
}

// Copies `from`'s part (this tp rank's slice) into every parameter of `to`.
void load_shard(Transformer& to, Transformer& from, int rank, int tp) {
  torch::NoGradGuard no_grad;
  auto whole = from->named_parameters();
  for (auto& p : to->named_parameters()) {
    torch::Tensor w = whole[p.key()];
    const int64_t dim = tp > 1 ? model::tensor_parallel_dim(p.key()) : -1;
    if (dim >= 0) {
      const model::Shard s = model::shard_of(w.size(dim), rank, tp);
      w = w.narrow(dim, s.start, s.size);
    }
    p.value().copy_(w);
  }
}

void expect_bitwise_equal(Transformer& got, Transformer& want, const std::string& where) {
  auto wanted = want->named_parameters();
  for (auto& p : got->named_parameters())
    EXPECT_TRUE(torch::equal(p.value(), wanted[p.key()])) << p.key() << " on " << where;
}

class WeightStream : public ::testing::TestWithParam<std::pair<int, int>> {};

TEST_P(WeightStream, GenerationRanksHoldTheTrainedWeightsBitwiseAndOnlyChangedSendsWhatMoved) {
  const auto [tp, receivers] = GetParam();
  const TransformerConfig c = config_of();
  Transformer want = trained(c);
  const int world = tp + receivers;
  std::vector<Transformer> nets;
  for (int r = 0; r < world; ++r) nets.push_back(seeded(c, r < tp ? 11 : 99 + r));
  Transformer reference = seeded(c, 11);
  const int64_t model_bytes = parameter_bytes(reference);
  torch::Tensor new_norm = torch::full({c.hidden_size}, 0.5);
  on_ranks(world, [&](int rank, SpmdGroup& group) {
    const bool training = rank < tp;
    std::unique_ptr<SpmdGroup> tp_group;
    std::vector<int> tp_ranks;
    for (int r = 0; r < tp; ++r) tp_ranks.push_back(r);
    if (training && tp > 1) {
      tp_group = group.subgroup("tp", tp_ranks);
      nets[rank]->shard_tensor_parallel({tp_group.get(), rank, tp});
    }
    if (training) load_shard(nets[rank], want, rank, tp);
    // 4 KiB buckets: the embedding (63 x 32 floats) and the MLP spans several.
    WeightStreamer stream(nets[rank], group, tp, "actor", {.bucket_bytes = 4096, .only_changed = true});
    const StreamStats first = stream.stream();
    EXPECT_EQ(first.tensors, static_cast<int64_t>(reference->parameters().size()));
    if (!training) {
      expect_bitwise_equal(nets[rank], want, "generation rank " + std::to_string(rank));
      EXPECT_EQ(first.bytes_received, model_bytes);
      EXPECT_GT(first.buckets, model_bytes / 4096);
    } else {
      EXPECT_EQ(first.bytes_received, 0);
      EXPECT_GT(first.bytes_sent, 0);
    }
    // One tensor moves (the final norm, whole on every tp rank): only it goes.
    if (training) {
      torch::NoGradGuard no_grad;
      nets[rank]->norm->weight.copy_(new_norm);
    }
    const StreamStats second = stream.stream();
    EXPECT_EQ(second.tensors, 1);
    if (!training) {
      EXPECT_TRUE(torch::equal(nets[rank]->norm->weight, new_norm));
      EXPECT_EQ(second.bytes_received, c.hidden_size * 4);
    }
    // Nothing moved: nothing goes.
    EXPECT_EQ(stream.stream().tensors, 0);
    // A checkpoint loaded into a new network of the same shape (the
    // starting weights again, in new tensors whose version counters start
    // over): once rebound, the next stream sends all of it.
    if (training) {
      Transformer loaded = seeded(c, 11);
      if (tp > 1) loaded->shard_tensor_parallel({tp_group.get(), rank, tp});
      load_shard(loaded, reference, rank, tp);
      stream.rebind(loaded);
    }
    const StreamStats after_load = stream.stream();
    EXPECT_EQ(after_load.tensors, static_cast<int64_t>(reference->parameters().size()));
    if (!training) expect_bitwise_equal(nets[rank], reference, "generation rank after a rebind");
  });
}

// Buckets travel on the host (Gloo), each side copying from and into its
// parameters' device: a model on a GPU streams to a model on a GPU (one
// GPU shared by both ranks, or two) and arrives bitwise.
TEST(WeightStreamCuda, AGpuModelStreamsToAGpuModelBitwiseThroughHostBuckets) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "LibTorch sees no GPU on this machine";
  const TransformerConfig c = config_of();
  Transformer want = trained(c);
  std::vector<Transformer> nets{seeded(c, 11), seeded(c, 99)};
  const auto gpus = static_cast<int>(torch::cuda::device_count());
  on_ranks(2, [&](int rank, SpmdGroup& group) {
    if (rank == 0) load_shard(nets[0], want, 0, 1);
    nets[rank]->to(torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(rank % gpus)));
    WeightStreamer stream(nets[rank], group, /*training_ranks=*/1, "actor", {.bucket_bytes = 4096});
    const StreamStats stats = stream.stream();
    if (rank == 0) return;
    EXPECT_EQ(stats.bytes_received, parameter_bytes(want));
    auto wanted = want->named_parameters();
    for (auto& p : nets[rank]->named_parameters()) {
      EXPECT_TRUE(p.value().is_cuda()) << p.key() << " left the GPU";
      EXPECT_TRUE(torch::equal(p.value().cpu(), wanted[p.key()])) << p.key();
    }
  });
}

TEST(WeightStreamErrors, ARebindToAModelOfOtherShapeIsRefused) {
  const TransformerConfig c = config_of();
  TransformerConfig wider = c;
  wider.hidden_size = 2 * c.hidden_size;
  std::vector<Transformer> nets = {seeded(c, 1), seeded(c, 2)};
  on_ranks(2, [&](int rank, SpmdGroup& group) {
    WeightStreamer stream(nets[rank], group, 1, "a");
    if (rank != 0) return;
    try {
      stream.rebind(seeded(wider, 3));
      ADD_FAILURE() << "a wider model was accepted";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("other parameters"), std::string::npos) << e.what();
    }
  });
}

// (training tp ranks, generation ranks)
INSTANTIATE_TEST_SUITE_P(Layouts, WeightStream,
                         ::testing::Values(std::pair{1, 1}, std::pair{2, 1}, std::pair{2, 2}));

TEST(WeightStreamErrors, AGroupWithoutAGenerationRankIsRefusedOnEveryRank) {
  const TransformerConfig c = config_of();
  std::vector<Transformer> nets = {seeded(c, 1), seeded(c, 1)};
  on_ranks(2, [&](int rank, SpmdGroup& group) {
    for (int training_ranks : {0, 2}) {
      try {
        WeightStreamer stream(nets[rank], group, training_ranks, "a");
        ADD_FAILURE() << "training_ranks = " << training_ranks << " was accepted";
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find("the group needs at least one generation rank"),
                  std::string::npos)
            << e.what();
      }
    }
  });
}

}  // namespace
}  // namespace rlwb::workers::hybrid_engine
