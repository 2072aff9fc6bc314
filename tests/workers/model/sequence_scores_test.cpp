// Training-side scoring over (prompt, response) rows: rows that share a
// prompt (GRPO's n samples of one prompt) run that prompt once, and give
// the same log-probs, entropy, values and gradients as rows scored one by one.
#include "workers/model/sequence_scores.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <vector>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/layers.h"

namespace rlwb::workers::model {
namespace {

struct Rows {
  SequenceBatch batch;
  torch::Tensor response_mask;  // [B, R] float
};

// 8 rows over 3 distinct prompts of different lengths (left-padded),
// interleaved, with right-padded responses of different lengths.
Rows shared_prompt_rows() {
  torch::Tensor prompts = torch::tensor({{0, 0, 5, 9}, {3, 4, 5, 6}, {0, 7, 8, 9}});
  torch::Tensor prompt_masks = torch::tensor({{0, 0, 1, 1}, {1, 1, 1, 1}, {0, 1, 1, 1}});
  torch::Tensor prompt_of = torch::tensor({0, 1, 2, 0, 1, 2, 0, 0});
  torch::manual_seed(3);
  torch::Tensor responses = torch::randint(3, 60, {8, 5});
  torch::Tensor response_mask = torch::ones({8, 5}, torch::kInt64);
  response_mask[1].narrow(0, 3, 2).zero_();
  response_mask[4].narrow(0, 1, 4).zero_();
  response_mask[7].narrow(0, 4, 1).zero_();
  responses.masked_fill_(response_mask == 0, 0);
  return {join_prompt_response(prompts.index_select(0, prompt_of), prompt_masks.index_select(0, prompt_of),
                               responses, response_mask),
          response_mask.to(torch::kFloat32)};
}

SequenceBatch row(const SequenceBatch& b, int64_t i) {
  return {b.input_ids.narrow(0, i, 1), b.attention_mask.narrow(0, i, 1), b.response_length};
}

std::vector<torch::Tensor> gradients(Transformer& model) {
  std::vector<torch::Tensor> g;
  for (auto& p : model->parameters())
    g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
  model->zero_grad();
  return g;
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol, const std::string& what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(torch::allclose(got, want, /*rtol=*/0, /*atol=*/tol))
      << what << ": max diff " << (got - want).abs().max().item<double>();
}

TEST(SharedPrompts, LogProbsEntropyAndGradientsEqualScoringRowByRow) {
  torch::manual_seed(11);
  Transformer model(testing::tiny_config(Architecture::kQwen2));
  auto [batch, mask] = shared_prompt_rows();
  auto loss_of = [&](const ResponseLogProbs& s, const torch::Tensor& m) {
    return (s.log_probs * m).sum() + 0.5 * (s.entropy * m).sum();
  };

  ResponseLogProbs shared;
  {
    testing::EmbeddingRowsSeen seen;
    shared = response_log_probs(model, batch, /*temperature=*/0.7, /*with_entropy=*/true);
    // Each of the 3 prompts ran once; then the 8 rows' responses.
    EXPECT_EQ(testing::EmbeddingRowsSeen::rows(), (std::vector<int64_t>{3, 8}));
  }
  loss_of(shared, mask).backward();
  auto shared_grads = gradients(model);

  std::vector<torch::Tensor> log_probs, entropy;
  for (int64_t i = 0; i < batch.input_ids.size(0); ++i) {
    auto one = response_log_probs(model, row(batch, i), 0.7, true);
    loss_of(one, mask.narrow(0, i, 1)).backward();  // gradients add up over the rows
    log_probs.push_back(one.log_probs.detach());
    entropy.push_back(one.entropy.detach());
  }
  auto row_grads = gradients(model);

  expect_close(shared.log_probs.detach() * mask, torch::cat(log_probs) * mask, 1e-5, "log-probs");
  expect_close(shared.entropy.detach() * mask, torch::cat(entropy) * mask, 1e-5, "entropy");
  for (size_t i = 0; i < row_grads.size(); ++i)
    expect_close(shared_grads[i], row_grads[i], 1e-4, "gradient of parameter " + std::to_string(i));

  torch::NoGradGuard no_grad;  // the fused inference path shares prompts too
  expect_close(response_log_probs(model, batch, 0.7).log_probs * mask, torch::cat(log_probs) * mask, 1e-5,
               "no-grad log-probs");
}

TEST(SharedPrompts, ValuesAndOneTokenResponsesEqualScoringRowByRow) {
  torch::manual_seed(12);
  TransformerConfig config = testing::tiny_config();
  config.head = Head::kValue;
  Transformer critic(config);
  auto [batch, mask] = shared_prompt_rows();
  torch::Tensor values = response_values(critic, batch);
  for (int64_t i = 0; i < batch.input_ids.size(0); ++i)
    expect_close(values[i] * mask[i], response_values(critic, row(batch, i))[0] * mask[i], 1e-5, "values");

  // One-token responses: only the prompt pass runs.
  Transformer actor(testing::tiny_config());
  SequenceBatch short_rows{batch.input_ids.narrow(1, 0, 5), batch.attention_mask.narrow(1, 0, 5), 1};
  testing::EmbeddingRowsSeen seen;
  torch::Tensor lp = response_log_probs(actor, short_rows).log_probs;
  EXPECT_EQ(testing::EmbeddingRowsSeen::rows(), (std::vector<int64_t>{3}));
  for (int64_t i = 0; i < 8; ++i)
    expect_close(lp[i], response_log_probs(actor, row(short_rows, i)).log_probs[0], 1e-5,
                 "one-token log-prob");
}

TEST(SharedPrompts, DistinctPromptsAreScoredWholeRows) {
  torch::manual_seed(13);
  Transformer model(testing::tiny_config());
  auto [batch, mask] = shared_prompt_rows();
  // 5 rows over 3 prompts: more than half are distinct, so one pass of
  // whole rows (the prompt pass would not pay for the second pass).
  SequenceBatch few{batch.input_ids.narrow(0, 0, 5), batch.attention_mask.narrow(0, 0, 5),
                    batch.response_length};
  testing::EmbeddingRowsSeen seen;
  response_log_probs(model, few);
  EXPECT_EQ(testing::EmbeddingRowsSeen::rows(), (std::vector<int64_t>{5}));
}

}  // namespace
}  // namespace rlwb::workers::model
