// Pipeline parallelism (workers/model/pipeline_parallel.h) alone and with
// tensor parallelism: the ranks of a (pp x tp) mesh in threads, each with
// real c10d Gloo groups (workers/mesh_groups.h), shard a model built with
// the same weights as a one-process reference and must compute what it
// computes -- logits within 1e-5 on every stage, log-probs, every held
// parameter's gradient, greedy tokens, and the weights the export writes.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "tests/workers/model/ranks_in_threads.h"
#include "tests/workers/model/sharded_model_support.h"
#include "workers/mesh_groups.h"
#include "workers/model/generation.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/model_error.h"
#include "workers/model/pipeline_parallel.h"
#include "workers/model/sequence_scores.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

using testing::expect_close;
using workers::testing::on_ranks;

// Three layers: over two stages the first holds two, the second one.
TransformerConfig config_for(bool tied) {
  TransformerConfig c = testing::tiny_config();
  c.qkv_bias = c.output_bias = c.mlp_bias = true;
  c.num_layers = 3;
  c.vocab_size = 63;  // uneven over tp = 2
  c.tie_word_embeddings = tied;
  return c;
}

using testing::loss_of;
using testing::rows_for;
using testing::seeded;
using testing::slice_of;

// Runs body(net, tp, pp) on every rank of a (1 x pp x tp) mesh, the model
// of each rank sharded to its stage and tensor-parallel part.
void on_mesh(int pp, int tp, const TransformerConfig& c,
             const std::function<void(Transformer&, const TensorParallel&, const PipelineParallel&)>& body,
             int micro_batches = 1) {
  const core::Mesh mesh{1, pp, tp};
  std::vector<Transformer> nets;
  for (int r = 0; r < mesh.world(); ++r) nets.push_back(seeded(c));
  on_ranks(mesh.world(), [&](int rank, SpmdGroup& pool) {
    std::shared_ptr<MeshGroups> groups = make_mesh_groups(pool, mesh, "m");
    const TensorParallel tpp = groups->tensor_parallel(rank);
    const PipelineParallel ppp = groups->pipeline_parallel(rank, micro_batches);
    nets[rank]->shard_tensor_parallel(tpp);
    nets[rank]->shard_pipeline_parallel(ppp);
    body(nets[rank], tpp, ppp);
  });
}

// Six rows, three samples of each of two prompts: scoring runs each prompt
// once into a growing KV cache and the responses against it
// (sequence_scores.cpp), and pipeline micro-batches split that cache.
SequenceBatch rows_sharing_prompts(int64_t vocab) {
  torch::manual_seed(6);
  torch::Tensor prompt = torch::randint(1, vocab, {2, 6}).repeat_interleave(3, 0);
  torch::Tensor prompt_mask = torch::ones({6, 6}, torch::kInt64);
  prompt_mask.narrow(0, 3, 3).narrow(1, 0, 2).fill_(0);  // the second prompt left-padded
  torch::Tensor response = torch::randint(1, vocab, {6, 4});
  torch::Tensor response_mask = torch::ones({6, 4}, torch::kInt64);
  response_mask[4].narrow(0, 2, 2).fill_(0);
  return join_prompt_response(prompt, prompt_mask, response, response_mask);
}

// (pp, tp, tied head, pipeline micro-batches, rows sharing prompts)
class PipelineParallelModel : public ::testing::TestWithParam<std::tuple<int, int, bool, int, bool>> {};

// With several pipeline micro-batches (pipeline_parallel.h) too: the three
// rows split 2 + 1 or 1 + 1 + 1, each micro-batch its own hand-overs; six
// rows sharing two prompts split their prompt cache across micro-batches.
TEST_P(PipelineParallelModel, ComputesWhatTheOneProcessModelComputes) {
  const auto [pp, tp, tied, micro_batches, shared] = GetParam();
  const TransformerConfig c = config_for(tied);
  const SequenceBatch rows = shared ? rows_sharing_prompts(c.vocab_size) : rows_for(c.vocab_size);
  const testing::OneProcessResults want = testing::what_one_process_computes(c, rows);
  const torch::Tensor& want_logits = want.logits;
  const ResponseLogProbs& want_lp = want.log_probs;
  std::map<std::string, torch::Tensor> want_grads = want.gradients;

  on_mesh(
      pp, tp, c,
      [&](Transformer& net, const TensorParallel& tpp, const PipelineParallel& ppp) {
        const std::string where = "stage " + std::to_string(ppp.stage) + " tp rank " +
                                  std::to_string(tpp.rank) + ", " + std::to_string(micro_batches) +
                                  " micro-batches";
        // Each stage holds its blocks only: 2 + 1 layers over two stages.
        const Shard held = layers_of_stage(3, ppp.stage, pp);
        for (int64_t layer = 0; layer < 3; ++layer)
          EXPECT_EQ(net->holds_layer(layer), layer >= held.start && layer < held.start + held.size) << where;
        // The embedding's and the head's rows are split over all pp * tp ranks.
        const Shard tokens = shard_of(c.vocab_size, ppp.vocab.rank, pp * tp);
        EXPECT_EQ(net->vocab_shard().start, tokens.start) << where;
        EXPECT_EQ(net->tok_embeddings->weight.size(0), tokens.size) << where;
        torch::Tensor local = net->forward(rows.input_ids, rows.attention_mask);
        EXPECT_EQ(local.size(2), tokens.size) << where;
        expect_close(gather_shards(local, 2, c.vocab_size, ppp.vocab), want_logits, 1e-5,
                     "logits on " + where);
        {
          c10::InferenceMode inference;
          ResponseLogProbs lp = response_log_probs(net, rows, 0.8, true);
          expect_close(lp.log_probs, want_lp.log_probs, 1e-5, "log-probs on " + where);
          expect_close(lp.entropy, want_lp.entropy, 1e-5, "entropy on " + where);
        }
        loss_of(net, rows).backward();
        constexpr double kGradientTolerance = 3e-5;
        for (auto& p : net->named_parameters()) {
          const int64_t layer = layer_of_parameter(p.key());
          if (layer >= 0 && !net->holds_layer(layer)) {
            EXPECT_EQ(p.value().numel(), 0) << p.key() << " is another stage's, on " << where;
            EXPECT_FALSE(p.value().requires_grad()) << p.key();
            continue;
          }
          ASSERT_TRUE(p.value().grad().defined()) << p.key() << " on " << where;
          // Every stage's share of the embedding gets its rows of the lookup's
          // gradient, which only stage 0's blocks read.
          const torch::Tensor want_grad = is_vocab_parameter(p.key())
                                              ? want_grads[p.key()].narrow(0, tokens.start, tokens.size)
                                              : slice_of(want_grads[p.key()], p.key(), tpp.rank, tp);
          expect_close(p.value().grad(), want_grad, kGradientTolerance,
                       "gradient of " + p.key() + " on " + where);
        }
      },
      micro_batches);
}

// More micro-batches than rows: one a row.
INSTANTIATE_TEST_SUITE_P(
    Layouts, PipelineParallelModel,
    ::testing::Values(std::make_tuple(2, 1, false, 1, false), std::make_tuple(2, 1, false, 2, false),
                      std::make_tuple(3, 1, false, 3, false), std::make_tuple(2, 1, true, 2, false),
                      std::make_tuple(2, 2, false, 8, false), std::make_tuple(2, 1, false, 4, true),
                      std::make_tuple(3, 2, false, 4, true)));

TEST(PipelineParallelModel, GreedyGenerationGivesTheSameTokensOnEveryStage) {
  const TransformerConfig c = config_for(false);
  Transformer reference = seeded(c);
  torch::manual_seed(9);
  torch::Tensor prompts = torch::randint(1, c.vocab_size, {4, 5});
  torch::Tensor mask = torch::ones_like(prompts);
  mask[1].narrow(0, 0, 3).fill_(0);
  GenerationOptions options;
  options.sampling.greedy = true;
  options.max_new_tokens = 12;
  options.stop_token_ids = {1};
  const GenerationResult want = generate(reference, prompts, mask, options);
  for (auto [pp, tp] : {std::pair{2, 1}, {3, 1}, {2, 2}}) {
    on_mesh(pp, tp, c, [&](Transformer& net, const TensorParallel&, const PipelineParallel& ppp) {
      GenerationResult got = generate(net, prompts, mask, options);
      EXPECT_TRUE(torch::equal(got.responses, want.responses)) << "stage " << ppp.stage << " tp " << tp;
      EXPECT_TRUE(torch::equal(got.response_mask, want.response_mask));
      expect_close(got.log_probs, want.log_probs, 1e-5, "greedy log-probs");
    });
  }
}

TEST(PipelineParallelModel, ExportsTheSameCheckpointAsTheUnshardedModel) {
  const TransformerConfig c = config_for(false);
  Transformer reference = seeded(c);
  testing::ScratchDir dir("pp-export");
  save_hf_checkpoint(reference, dir.path() / "whole");
  on_mesh(2, 2, c, [&](Transformer& net, const TensorParallel& tpp, const PipelineParallel& ppp) {
    Transformer whole(net->unsharded_copy());
    EXPECT_FALSE(whole->pipeline_parallel().active());
    if (ppp.stage == 1 && tpp.rank == 1) save_hf_checkpoint(whole, dir.path() / "sharded");
  });
  EXPECT_EQ(testing::read_file(dir.path() / "sharded" / "model.safetensors"),
            testing::read_file(dir.path() / "whole" / "model.safetensors"));
}

TEST(PipelineParallelModel, RefusesMoreStagesThanLayers) {
  TransformerConfig c = config_for(false);
  c.num_layers = 1;
  Transformer net(c);
  try {
    net->shard_pipeline_parallel({nullptr, 0, 2});
    FAIL() << "two stages over one layer were accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("choose pp <= num_layers"), std::string::npos) << e.what();
  }
}

// Stages split the vocabulary over the replica's pp * tp ranks: a
// PipelineParallel without that group is refused, naming what to pass.
TEST(PipelineParallelModel, RefusesStagesWithoutTheVocabularyGroup) {
  Transformer net(config_for(false));
  try {
    net->shard_pipeline_parallel({nullptr, 0, 2, 1});
    FAIL() << "stages without a vocab group were accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("PipelineParallel::vocab has 1; pass make_mesh_groups' vocab group"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineParallelModel, RefusesFewerThanOneMicroBatch) {
  Transformer net(config_for(false));
  try {
    net->shard_pipeline_parallel({nullptr, 0, 2, 0});
    FAIL() << "zero pipeline micro-batches were accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'pipeline_micro_batches' = 0 must be at least 1"),
              std::string::npos)
        << e.what();
  }
}

TEST(PipelineParallelModel, LayersSplitIntoContiguousRunsTheFirstStagesLonger) {
  EXPECT_EQ(layers_of_stage(5, 0, 2).start, 0);
  EXPECT_EQ(layers_of_stage(5, 0, 2).size, 3);
  EXPECT_EQ(layers_of_stage(5, 1, 2).start, 3);
  EXPECT_EQ(layers_of_stage(5, 1, 2).size, 2);
  EXPECT_EQ(stage_of_layer(2, 5, 2), 0);
  EXPECT_EQ(stage_of_layer(3, 5, 2), 1);
  EXPECT_EQ(stage_of_layer(4, 5, 2), 1);
  EXPECT_EQ(layer_of_parameter("layers.12.wq.weight"), 12);
  EXPECT_EQ(layer_of_parameter("tok_embeddings.weight"), -1);
  EXPECT_EQ(pipeline_parallel_ranks(core::Mesh{2, 2, 2}, 5), (std::vector<int>{5, 7}));
}

}  // namespace
}  // namespace rlwb::workers::model
