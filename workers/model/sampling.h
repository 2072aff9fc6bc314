// Next-token choice from logits: greedy, temperature, top-k, top-p.
// Used by generate() (generation.h); the filters are public so tests and
// other samplers can check and reuse them.
#pragma once

#include <ATen/core/Generator.h>
#include <torch/types.h>

namespace rlwb::workers::model {

struct SamplingOptions {
  bool greedy = false;       // argmax; the other settings are ignored
  double temperature = 1.0;  // logits / temperature; must be > 0 unless greedy
  int64_t top_k = 0;         // keep the k most likely tokens; 0 = all
  double top_p = 1.0;        // keep the smallest set whose probability >= top_p; 1 = all
};

// Throws ModelError naming the setting when a value is out of range.
void validate(const SamplingOptions& options);

// logits [B, V] with everything but the k largest per row set to -inf
// (ties at the k-th value are kept). k <= 0 or k >= V: unchanged.
torch::Tensor filter_top_k(const torch::Tensor& logits, int64_t k);

// logits [B, V] with everything outside the nucleus set to -inf: tokens are
// taken from the most likely down until their probabilities sum to >= p;
// the most likely token is always kept. p >= 1: unchanged.
torch::Tensor filter_top_p(const torch::Tensor& logits, double p);

// The next token of every row [B] (int64) and its log-probability [B]
// under softmax(logits / temperature) -- before top-k/top-p, i.e. the
// quantity the trainer recomputes with log_probs at the same temperature.
// For greedy the log-probability is under softmax(logits).
struct NextTokens {
  torch::Tensor tokens;
  torch::Tensor log_probs;
};
NextTokens sample_next_tokens(const torch::Tensor& logits, const SamplingOptions& options,
                              at::Generator& generator);

}  // namespace rlwb::workers::model
