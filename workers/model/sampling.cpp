#include "workers/model/sampling.h"

#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {

void validate(const SamplingOptions& o) {
  if (o.greedy) return;
  if (!(o.temperature > 0) || !std::isfinite(o.temperature)) {
    throw ModelError("sampling: 'temperature' must be > 0 (use greedy for argmax), got " +
                     std::to_string(o.temperature));
  }
  if (o.top_k < 0)
    throw ModelError("sampling: 'top_k' must be >= 0 (0 = off), got " + std::to_string(o.top_k));
  if (!(o.top_p > 0 && o.top_p <= 1)) {
    throw ModelError("sampling: 'top_p' must be in (0, 1], got " + std::to_string(o.top_p));
  }
}

torch::Tensor filter_top_k(const torch::Tensor& logits, int64_t k) {
  if (k <= 0 || k >= logits.size(-1)) return logits;
  torch::Tensor kth = std::get<0>(logits.topk(k, -1)).narrow(-1, k - 1, 1);  // [B, 1]
  return logits.masked_fill(logits < kth, -std::numeric_limits<float>::infinity());
}

torch::Tensor filter_top_p(const torch::Tensor& logits, double p) {
  if (p >= 1.0) return logits;
  auto [sorted, order] = logits.sort(-1, /*descending=*/true);
  torch::Tensor probs = sorted.softmax(-1);
  // A token is dropped when the tokens before it already reach p.
  torch::Tensor before = probs.cumsum(-1) - probs;
  torch::Tensor drop_sorted = before >= p;
  torch::Tensor drop = torch::zeros_like(drop_sorted).scatter(-1, order, drop_sorted);
  return logits.masked_fill(drop, -std::numeric_limits<float>::infinity());
}

NextTokens sample_next_tokens(const torch::Tensor& logits, const SamplingOptions& o,
                              at::Generator& generator) {
  torch::Tensor scores = logits.to(torch::kFloat32);
  if (o.greedy) {
    torch::Tensor tokens = scores.argmax(-1);
    torch::Tensor log_probs = scores.log_softmax(-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
    return {tokens, log_probs};
  }
  if (o.temperature != 1.0) scores = scores / o.temperature;
  torch::Tensor filtered = filter_top_p(filter_top_k(scores, o.top_k), o.top_p);
  torch::Tensor probs = filtered.softmax(-1);
  torch::Tensor tokens = at::multinomial(probs, 1, /*replacement=*/false, generator).squeeze(-1);
  torch::Tensor log_probs = scores.log_softmax(-1).gather(-1, tokens.unsqueeze(-1)).squeeze(-1);
  return {tokens, log_probs};
}

}  // namespace rlwb::workers::model
