// generate() and the training-side scores: the KV cache agrees with a full
// recompute, ragged left-padded batches agree with rows alone (rows that
// share a prompt too, prefilled once), seeds make
// sampling reproducible, stop tokens end rows, top-k/top-p filter as
// specified, rollout log-probs equal training log-probs, values and
// entropy have the documented meaning.
#include "workers/model/generation.h"

#include <gtest/gtest.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/torch.h>

#include <cmath>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/layers.h"
#include "workers/model/model_error.h"
#include "workers/model/sequence_scores.h"

namespace rlwb::workers::model {
namespace {

Transformer tiny_model(uint64_t seed, Architecture arch = Architecture::kLlama) {
  torch::manual_seed(seed);
  Transformer model(testing::tiny_config(arch));
  model->eval();
  return model;
}

GenerationOptions greedy(int64_t max_new) {
  GenerationOptions o;
  o.sampling.greedy = true;
  o.max_new_tokens = max_new;
  return o;
}

const std::vector<std::vector<int64_t>> kPrompts = {{5, 9, 11, 3, 7, 21, 8}, {4, 2}, {30, 31, 32, 33}};

TEST(Generation, KvCacheTokensAndLogProbsMatchAFullRecompute) {
  for (Architecture arch : {Architecture::kLlama, Architecture::kQwen2}) {
    Transformer model = tiny_model(11, arch);
    PaddedPrompts p = left_pad(kPrompts, 0);
    GenerationResult r = generate(model, p.ids, p.mask, greedy(10));
    // Recompute every step from scratch: the whole sequence in one pass.
    torch::NoGradGuard no_grad;
    SequenceBatch seq = join_prompt_response(p.ids, p.mask, r.responses, r.response_mask);
    torch::Tensor logits = model->forward(seq.input_ids, seq.attention_mask);
    const int64_t P = p.ids.size(1);
    torch::Tensor step_logits = logits.narrow(1, P - 1, 10);  // positions that predict the response
    EXPECT_TRUE(torch::equal(step_logits.argmax(-1), r.responses));
    torch::Tensor recomputed = step_logits.log_softmax(-1).gather(-1, r.responses.unsqueeze(-1)).squeeze(-1);
    EXPECT_TRUE(torch::allclose(recomputed, r.log_probs, 0, 1e-5)) << recomputed - r.log_probs;
  }
}

TEST(Generation, RaggedLeftPaddedBatchEqualsEachRowAlone) {
  Transformer model = tiny_model(12, Architecture::kQwen2);
  PaddedPrompts batch = left_pad(kPrompts, 0);
  GenerationResult together = generate(model, batch.ids, batch.mask, greedy(12));
  for (size_t i = 0; i < kPrompts.size(); ++i) {
    PaddedPrompts one = left_pad({kPrompts[i]}, 0);
    GenerationResult alone = generate(model, one.ids, one.mask, greedy(12));
    EXPECT_TRUE(torch::equal(together.responses[i], alone.responses[0])) << "row " << i;
    EXPECT_TRUE(torch::allclose(together.log_probs[i], alone.log_probs[0], 0, 1e-5)) << "row " << i;
  }
}

TEST(Generation, RowsSharingAPromptPrefillItOnceAndGenerateAsEachRowAlone) {
  Transformer model = tiny_model(14, Architecture::kQwen2);
  const std::vector<std::vector<int64_t>> rows = {kPrompts[0], kPrompts[1], kPrompts[0],
                                                  kPrompts[2], kPrompts[1], kPrompts[0]};
  PaddedPrompts batch = left_pad(rows, 0);
  GenerationResult together;
  {
    testing::EmbeddingRowsSeen seen;
    together = generate(model, batch.ids, batch.mask, greedy(8));
    ASSERT_FALSE(seen.rows().empty());
    EXPECT_EQ(seen.rows().front(), 3) << "the prefill runs each of the 3 distinct prompts once";
  }
  for (size_t i = 0; i < rows.size(); ++i) {
    PaddedPrompts one = left_pad({rows[i]}, 0);
    GenerationResult alone = generate(model, one.ids, one.mask, greedy(8));
    EXPECT_TRUE(torch::equal(together.responses[i], alone.responses[0])) << "row " << i;
    EXPECT_TRUE(torch::allclose(together.log_probs[i], alone.log_probs[0], 0, 1e-5)) << "row " << i;
  }
}

TEST(Generation, SameSeedGivesSameTokensAndOtherSeedsDiffer) {
  Transformer model = tiny_model(13);
  PaddedPrompts p = left_pad(kPrompts, 0);
  GenerationOptions o;
  o.max_new_tokens = 20;
  o.sampling.temperature = 1.0;
  o.seed = 7;
  GenerationResult a = generate(model, p.ids, p.mask, o);
  GenerationResult b = generate(model, p.ids, p.mask, o);
  EXPECT_TRUE(torch::equal(a.responses, b.responses));
  EXPECT_TRUE(torch::equal(a.log_probs, b.log_probs));
  o.seed = 8;
  GenerationResult c = generate(model, p.ids, p.mask, o);
  EXPECT_FALSE(torch::equal(a.responses, c.responses));
}

TEST(Generation, SamplingWithTopKOneIsGreedy) {
  Transformer model = tiny_model(14);
  PaddedPrompts p = left_pad(kPrompts, 0);
  GenerationOptions o;
  o.max_new_tokens = 8;
  o.sampling.top_k = 1;
  o.seed = 3;
  EXPECT_TRUE(torch::equal(generate(model, p.ids, p.mask, o).responses,
                           generate(model, p.ids, p.mask, greedy(8)).responses));
}

TEST(Generation, RowsEndAtTheirFirstStopTokenAndArePaddedAfter) {
  Transformer model = tiny_model(15);
  PaddedPrompts p = left_pad(kPrompts, 0);
  GenerationResult free = generate(model, p.ids, p.mask, greedy(16));
  // Stop at the token row 0 emits third: rows end at different steps, so
  // finished rows are dropped from the batch while others go on.
  const int64_t stop = free.responses[0][2].item<int64_t>();
  GenerationOptions o = greedy(16);
  o.stop_token_ids = {stop};
  o.pad_token_id = 63;
  GenerationResult r = generate(model, p.ids, p.mask, o);
  ASSERT_EQ(r.responses.sizes(), free.responses.sizes());
  for (int64_t row = 0; row < 3; ++row) {
    int64_t end = 16;  // one past the stop token, as in the free run
    for (int64_t t = 0; t < 16; ++t) {
      if (free.responses[row][t].item<int64_t>() == stop) {
        end = t + 1;
        break;
      }
    }
    EXPECT_EQ(r.response_lengths[row].item<int64_t>(), end) << "row " << row;
    EXPECT_TRUE(torch::equal(r.responses[row].narrow(0, 0, end), free.responses[row].narrow(0, 0, end)));
    EXPECT_TRUE(
        torch::allclose(r.log_probs[row].narrow(0, 0, end), free.log_probs[row].narrow(0, 0, end), 0, 1e-5));
    EXPECT_EQ(r.response_mask[row].sum().item<int64_t>(), end);
    if (end < 16) {
      EXPECT_TRUE((r.responses[row].narrow(0, end, 16 - end) == 63).all().item<bool>());
      EXPECT_TRUE((r.log_probs[row].narrow(0, end, 16 - end) == 0).all().item<bool>());
    }
  }
  EXPECT_EQ(r.response_lengths[0].item<int64_t>(), 3);
}

TEST(Generation, WithoutStopTokensEveryRowRunsToMaxNewTokens) {
  Transformer model = tiny_model(16);
  PaddedPrompts p = left_pad(kPrompts, 0);
  GenerationResult r = generate(model, p.ids, p.mask, greedy(5));
  EXPECT_EQ(r.responses.sizes(), (std::vector<int64_t>{3, 5}));
  EXPECT_TRUE((r.response_lengths == 5).all().item<bool>());
  EXPECT_TRUE((r.response_mask == 1).all().item<bool>());
}

TEST(Generation, RolloutLogProbsEqualTrainingLogProbsAtTheSameTemperature) {
  Transformer model = tiny_model(17, Architecture::kQwen2);
  PaddedPrompts p = left_pad(kPrompts, 0);
  GenerationOptions o;
  o.max_new_tokens = 12;
  o.sampling = {false, 0.7, 20, 0.9};
  o.seed = 5;
  GenerationResult r = generate(model, p.ids, p.mask, o);
  torch::NoGradGuard no_grad;
  ResponseLogProbs scored =
      response_log_probs(model, join_prompt_response(p.ids, p.mask, r.responses, r.response_mask), 0.7);
  EXPECT_TRUE(torch::allclose(scored.log_probs, r.log_probs, 0, 1e-5)) << scored.log_probs - r.log_probs;
}

TEST(Sampling, TopKKeepsTheKLargestLogits) {
  const float inf = std::numeric_limits<float>::infinity();
  torch::Tensor out = filter_top_k(torch::tensor({{1.0f, 5.0f, 3.0f, 4.0f}}), 2);
  EXPECT_TRUE(torch::equal(out, torch::tensor({{-inf, 5.0f, -inf, 4.0f}}))) << out;
  EXPECT_TRUE(torch::equal(filter_top_k(torch::tensor({{1.0f, 2.0f}}), 0), torch::tensor({{1.0f, 2.0f}})));
}

TEST(Sampling, TopPKeepsTheSmallestSetReachingP) {
  const float inf = std::numeric_limits<float>::infinity();
  // probabilities 0.5, 0.3, 0.15, 0.05 (in shuffled order)
  torch::Tensor logits = torch::log(torch::tensor({{0.15f, 0.5f, 0.05f, 0.3f}}));
  torch::Tensor at07 = filter_top_p(logits, 0.7);  // 0.5 + 0.3 reaches 0.7
  EXPECT_TRUE(torch::equal(at07.isinf(), torch::tensor({{true, false, true, false}}))) << at07;
  torch::Tensor at05 = filter_top_p(logits, 0.5);  // 0.5 alone reaches it
  EXPECT_TRUE(torch::equal(at05.isinf(), torch::tensor({{true, false, true, true}}))) << at05;
  torch::Tensor tiny = filter_top_p(logits, 0.01);  // the most likely token always stays
  EXPECT_EQ(tiny.isinf().logical_not().sum().item<int64_t>(), 1);
  EXPECT_FLOAT_EQ(tiny[0][1].item<float>(), logits[0][1].item<float>());
  (void)inf;
}

TEST(Sampling, FrequenciesFollowTheFilteredDistribution) {
  // probabilities 0.6, 0.3, 0.1; top_k = 2 leaves 2/3, 1/3.
  torch::Tensor logits = torch::log(torch::tensor({0.6f, 0.3f, 0.1f})).repeat({6000, 1});
  at::Generator gen = at::detail::getDefaultCPUGenerator().clone();
  gen.set_current_seed(1);
  NextTokens plain = sample_next_tokens(logits, {false, 1.0, 0, 1.0}, gen);
  torch::Tensor freq = torch::bincount(plain.tokens, {}, 3).to(torch::kFloat32) / 6000;
  EXPECT_TRUE(torch::allclose(freq, torch::tensor({0.6f, 0.3f, 0.1f}), 0, 0.03)) << freq;
  NextTokens top2 = sample_next_tokens(logits, {false, 1.0, 2, 1.0}, gen);
  freq = torch::bincount(top2.tokens, {}, 3).to(torch::kFloat32) / 6000;
  EXPECT_TRUE(torch::allclose(freq, torch::tensor({2 / 3.0f, 1 / 3.0f, 0.0f}), 0, 0.03)) << freq;
  // Log-probs are of the unfiltered (temperature-only) distribution.
  EXPECT_NEAR(top2.log_probs[0].item<float>(), std::log(top2.tokens[0].item<int64_t>() == 0 ? 0.6f : 0.3f),
              1e-5);
}

TEST(SequenceScores, EntropyOfAUniformNextTokenIsLogVocab) {
  Transformer model = tiny_model(18);
  torch::NoGradGuard no_grad;
  model->lm_head->weight.zero_();  // every logit 0
  SequenceBatch seq{torch::tensor({{3, 4, 5, 6}}), torch::ones({1, 4}, torch::kInt64), 2};
  ResponseLogProbs s = response_log_probs(model, seq, 1.0, /*with_entropy=*/true);
  EXPECT_TRUE(torch::allclose(s.entropy, torch::full({1, 2}, std::log(64.0f)), 0, 1e-5)) << s.entropy;
  EXPECT_TRUE(torch::allclose(s.log_probs, torch::full({1, 2}, -std::log(64.0f)), 0, 1e-5));
}

TEST(SequenceScores, LogProbsBackpropagateIntoEveryParameter) {
  Transformer model = tiny_model(19, Architecture::kQwen2);
  SequenceBatch seq{torch::tensor({{0, 3, 4, 5, 6, 7}, {8, 9, 10, 11, 12, 0}}),
                    torch::tensor({{0, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 0}}), 3};
  ResponseLogProbs s = response_log_probs(model, seq, 1.0, true);
  (s.log_probs.sum() + s.entropy.sum()).backward();
  for (const auto& p : model->named_parameters()) {
    ASSERT_TRUE(p.value().grad().defined()) << p.key();
    EXPECT_GT(p.value().grad().abs().sum().item<float>(), 0) << p.key();
  }
}

TEST(SequenceScores, ValuesAreTheValueHeadOneStepBeforeEachResponseToken) {
  TransformerConfig c = testing::tiny_config();
  c.head = Head::kValue;
  torch::manual_seed(20);
  Transformer critic(c);
  torch::NoGradGuard no_grad;
  SequenceBatch seq{torch::tensor({{0, 3, 4, 5, 6, 7}}), torch::tensor({{0, 1, 1, 1, 1, 1}}), 2};
  torch::Tensor values = response_values(critic, seq);
  torch::Tensor hidden =
      critic->hidden_states(seq.input_ids, position_ids_from_mask(seq.attention_mask), seq.attention_mask);
  torch::Tensor all = critic->values(hidden);  // [1, 6]
  EXPECT_TRUE(torch::allclose(values, all.narrow(1, 3, 2), 0, 1e-6));
  EXPECT_THROW(critic->logits(hidden), ModelError);
}

TEST(SequenceScores, RewardScoreIsTheValueAtTheLastRealToken) {
  TransformerConfig c = testing::tiny_config(Architecture::kQwen2);
  c.head = Head::kValue;
  torch::manual_seed(21);
  Transformer reward_model(c);
  torch::NoGradGuard no_grad;
  torch::Tensor ids = torch::tensor({{0, 3, 4, 5, 6, 0}, {0, 0, 9, 9, 0, 0}});
  torch::Tensor mask = torch::tensor({{0, 1, 1, 1, 1, 0}, {0, 0, 1, 1, 0, 0}});
  torch::Tensor scores = sequence_scores(reward_model, ids, mask);
  torch::Tensor alone0 =
      sequence_scores(reward_model, torch::tensor({{3, 4, 5, 6}}), torch::ones({1, 4}, torch::kInt64));
  torch::Tensor alone1 =
      sequence_scores(reward_model, torch::tensor({{9, 9}}), torch::ones({1, 2}, torch::kInt64));
  EXPECT_NEAR(scores[0].item<float>(), alone0[0].item<float>(), 1e-5);
  EXPECT_NEAR(scores[1].item<float>(), alone1[0].item<float>(), 1e-5);
}

}  // namespace
}  // namespace rlwb::workers::model
