#include "workers/model/vocab_parallel.h"

#include <torch/torch.h>

#include <limits>

#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

torch::Tensor gumbel_noise(const torch::Tensor& like, at::Generator& generator) {
  const double tiny = std::numeric_limits<float>::min();
  torch::Tensor u = at::rand(like.sizes(), generator, like.options()).clamp(tiny, 1.0 - 1e-7);
  return -(-u.log()).log();
}

// A shard's part of the softmax normaliser: its max and sum of exp(l - max).
std::pair<torch::Tensor, torch::Tensor> shard_normaliser(const torch::Tensor& scores) {
  torch::Tensor max = scores.amax(-1);
  return {max, (scores - max.unsqueeze(-1)).exp().sum(-1)};
}

// log-sum-exp over the ranks from every rank's (max, sum), [tp, B] each.
torch::Tensor combined_log_sum_exp(const torch::Tensor& maxes, const torch::Tensor& sums) {
  torch::Tensor max = maxes.amax(0);
  return max + (sums * (maxes - max).exp()).sum(0).log();
}

// Every rank's row summary [B, C] (as float64: ids stay exact), gathered
// in one collective: [tp, B, C].
torch::Tensor gather_summaries(const std::vector<torch::Tensor>& columns, const TensorParallel& tp) {
  std::vector<torch::Tensor> as_double;
  for (const auto& c : columns) as_double.push_back(c.to(torch::kFloat64));
  return torch::stack(tp.group->all_gather(torch::stack(as_double, -1).contiguous()));
}

// Sampling's one collective per step: each rank sends its candidate
// (score, id, logit) and its normaliser; the winner is the rank with the
// best score (the lowest on a tie, as argmax over the whole row takes the
// lowest id). With greedy, score and logit are the logit itself; with
// Gumbel-max the score carries the rank's noise.
NextTokens best_over_ranks(const torch::Tensor& best_score, const torch::Tensor& best_index,
                           const torch::Tensor& best_logit, const torch::Tensor& logits, Shard vocab,
                           const TensorParallel& tp) {
  auto [max, sum] = shard_normaliser(logits);
  torch::Tensor all = gather_summaries({best_score, best_index + vocab.start, best_logit, max, sum}, tp);
  torch::Tensor winner = all.select(-1, 0).argmax(0, /*keepdim=*/true);  // [1, B]
  torch::Tensor tokens = all.select(-1, 1).gather(0, winner).squeeze(0).to(torch::kInt64);
  torch::Tensor logit = all.select(-1, 2).gather(0, winner).squeeze(0);
  torch::Tensor lse = combined_log_sum_exp(all.select(-1, 3), all.select(-1, 4));
  return {tokens, (logit - lse).to(torch::kFloat32)};
}

// Top-k over the ranks: every rank's k best (score, id) and its normaliser
// in one collective, then top-k and top-p over the tp * k candidates and a
// draw from `shared` (alike on every rank, so every rank picks the same).
NextTokens sample_top_k_over_ranks(const torch::Tensor& scores, const SamplingOptions& o, Shard vocab,
                                   const TensorParallel& tp, at::Generator& shared) {
  const int64_t rows = scores.size(0), k = o.top_k, kept = std::min(k, scores.size(1));
  auto [values, index] = scores.topk(kept, -1);
  auto [max, sum] = shard_normaliser(scores);
  // [B, k + 1, 2]: the candidates (missing ones -inf), then (max, sum).
  torch::Tensor summary = torch::full({rows, k + 1, 2}, -std::numeric_limits<double>::infinity(),
                                      scores.options().dtype(torch::kFloat64));
  summary.narrow(1, 0, kept).select(-1, 0).copy_(values);
  summary.narrow(1, 0, kept).select(-1, 1).copy_(index + vocab.start);
  summary.narrow(1, kept, k - kept).select(-1, 1).fill_(0);
  summary.select(1, k).select(-1, 0).copy_(max);
  summary.select(1, k).select(-1, 1).copy_(sum);
  torch::Tensor all = torch::stack(tp.group->all_gather(summary.contiguous()));  // [tp, B, k + 1, 2]
  torch::Tensor candidates = all.narrow(2, 0, k).permute({1, 0, 2, 3}).reshape({rows, tp.size * k, 2});
  torch::Tensor candidate_scores = candidates.select(-1, 0).to(scores.scalar_type());
  torch::Tensor filtered = filter_top_p(filter_top_k(candidate_scores, k), o.top_p);
  torch::Tensor pick = at::multinomial(filtered.softmax(-1), 1, /*replacement=*/false, shared);
  torch::Tensor tokens = candidates.select(-1, 1).gather(-1, pick).squeeze(-1).to(torch::kInt64);
  torch::Tensor logit = candidates.select(-1, 0).gather(-1, pick).squeeze(-1);
  torch::Tensor lse = combined_log_sum_exp(all.select(2, k).select(-1, 0), all.select(2, k).select(-1, 1));
  return {tokens, (logit - lse).to(torch::kFloat32)};
}

}  // namespace

torch::Tensor held_embedding_rows(const torch::Tensor& weight, const torch::Tensor& input_ids, Shard vocab) {
  torch::Tensor local = input_ids - vocab.start;
  torch::Tensor held = (local >= 0).logical_and(local < vocab.size);
  torch::Tensor rows = torch::embedding(weight, local.clamp(0, vocab.size - 1));
  return rows.masked_fill(held.logical_not().unsqueeze(-1), 0.0);
}

VocabLogProbs vocab_log_probs(const torch::Tensor& local, const torch::Tensor& targets, Shard vocab,
                              const TensorParallel& tp, bool with_entropy) {
  VocabLogProbs out;
  if (!tp.active()) {
    torch::Tensor log_p = local.log_softmax(-1);
    out.log_probs = log_p.gather(-1, targets.unsqueeze(-1)).squeeze(-1);
    if (with_entropy) out.entropy = -(log_p.exp() * log_p).sum(-1);  // H = -sum p log p
    return out;
  }
  // The max only keeps exp() in range; the result does not depend on it,
  // so it is detached.
  torch::Tensor max = local.detach().amax(-1).contiguous();
  tp.group->all_reduce_max(max);
  torch::Tensor e = (local - max.unsqueeze(-1)).exp();
  // The chosen token's logit: from the rank that holds it, 0 elsewhere.
  torch::Tensor local_ids = targets - vocab.start;
  torch::Tensor held = (local_ids >= 0).logical_and(local_ids < vocab.size);
  torch::Tensor picked = local.gather(-1, local_ids.clamp(0, vocab.size - 1).unsqueeze(-1)).squeeze(-1);
  std::vector<torch::Tensor> parts = {e.sum(-1), picked.masked_fill(held.logical_not(), 0.0)};
  if (with_entropy) parts.push_back((e * local).sum(-1));
  // S, the chosen logit and T in one all-reduce.
  torch::Tensor sums = reduce_from_tensor_parallel(torch::stack(parts, -1), tp);
  torch::Tensor lse = max + sums.select(-1, 0).log();
  out.log_probs = sums.select(-1, 1) - lse;
  if (with_entropy) out.entropy = lse - sums.select(-1, 2) / sums.select(-1, 0);
  return out;
}

NextTokens sample_vocab_parallel(const torch::Tensor& local, Shard vocab, int64_t vocab_size,
                                 const TensorParallel& tp, const SamplingOptions& o, at::Generator& shared,
                                 at::Generator& own) {
  if (!tp.active()) return sample_next_tokens(local, o, shared);
  torch::Tensor scores = local.to(torch::kFloat32);
  if (o.greedy) {
    auto [best, index] = scores.max(-1);
    return best_over_ranks(best, index, best, scores, vocab, tp);
  }
  if (o.temperature != 1.0) scores = scores / o.temperature;
  if (o.top_k > 0 && o.top_k < vocab_size) return sample_top_k_over_ranks(scores, o, vocab, tp, shared);
  if (o.top_p < 1.0) return sample_next_tokens(gather_shards(local, 1, vocab_size, tp), o, shared);
  auto [best, index] = (scores + gumbel_noise(scores, own)).max(-1);
  return best_over_ranks(best, index, scores.gather(-1, index.unsqueeze(-1)).squeeze(-1), scores, vocab, tp);
}

}  // namespace rlwb::workers::model
