#include "workers/model/vocab_parallel.h"

#include <torch/torch.h>

#include <limits>

#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

// Per row, the id of the rank whose score is largest (the lowest rank on a
// tie, as argmax over the whole row takes the lowest id). scores and ids
// [B] -> {best score [B], its id [B] int64}.
std::pair<torch::Tensor, torch::Tensor> best_over_ranks(const torch::Tensor& scores, const torch::Tensor& ids,
                                                        const TensorParallel& tp) {
  torch::Tensor pairs = torch::stack({scores.to(torch::kFloat64), ids.to(torch::kFloat64)}, -1).contiguous();
  torch::Tensor all = torch::stack(tp.group->all_gather(pairs));         // [tp, B, 2]
  torch::Tensor winner = all.select(-1, 0).argmax(0, /*keepdim=*/true);  // [1, B]
  return {all.select(-1, 0).gather(0, winner).squeeze(0).to(scores.scalar_type()),
          all.select(-1, 1).gather(0, winner).squeeze(0).to(torch::kInt64)};
}

// Every rank's k best (score, id) per row, gathered: [B, tp * k] each,
// missing entries (a shard narrower than k) as -inf.
std::pair<torch::Tensor, torch::Tensor> top_k_over_ranks(const torch::Tensor& scores, int64_t k, Shard vocab,
                                                         const TensorParallel& tp) {
  const int64_t rows = scores.size(0), kept = std::min(k, scores.size(1));
  auto [values, index] = scores.topk(kept, -1);
  torch::Tensor pairs = torch::full({rows, k, 2}, -std::numeric_limits<double>::infinity(),
                                    scores.options().dtype(torch::kFloat64));
  pairs.narrow(1, 0, kept).select(-1, 0).copy_(values);
  pairs.narrow(1, 0, kept).select(-1, 1).copy_(index + vocab.start);
  pairs.narrow(1, kept, k - kept).select(-1, 1).fill_(0);
  torch::Tensor all = torch::cat(tp.group->all_gather(pairs), 1);  // [B, tp * k, 2]
  return {all.select(-1, 0).to(scores.scalar_type()), all.select(-1, 1).to(torch::kInt64)};
}

torch::Tensor gumbel_noise(const torch::Tensor& like, at::Generator& generator) {
  const double tiny = std::numeric_limits<float>::min();
  torch::Tensor u = at::rand(like.sizes(), generator, like.options()).clamp(tiny, 1.0 - 1e-7);
  return -(-u.log()).log();
}

}  // namespace

VocabSoftmax vocab_softmax(const torch::Tensor& local, const TensorParallel& tp, bool with_entropy) {
  VocabSoftmax out;
  if (!tp.active()) {
    out.log_sum_exp = local.logsumexp(-1);
    if (with_entropy) {
      torch::Tensor log_p = local - out.log_sum_exp.unsqueeze(-1);
      out.entropy = -(log_p.exp() * log_p).sum(-1);
    }
    return out;
  }
  // The max only keeps exp() in range; the result does not depend on it,
  // so it is detached.
  torch::Tensor max = local.detach().amax(-1).contiguous();
  tp.group->all_reduce_max(max);
  torch::Tensor e = (local - max.unsqueeze(-1)).exp();
  torch::Tensor sums = with_entropy ? torch::stack({e.sum(-1), (e * local).sum(-1)}, -1) : e.sum(-1);
  sums = reduce_from_tensor_parallel(sums, tp);
  torch::Tensor s = with_entropy ? sums.select(-1, 0) : sums;
  out.log_sum_exp = max + s.log();
  if (with_entropy) out.entropy = out.log_sum_exp - sums.select(-1, 1) / s;
  return out;
}

torch::Tensor vocab_log_sum_exp(const torch::Tensor& local, const TensorParallel& tp) {
  return vocab_softmax(local, tp, false).log_sum_exp;
}

torch::Tensor vocab_logit_of(const torch::Tensor& local, const torch::Tensor& ids, Shard vocab,
                             const TensorParallel& tp) {
  if (!tp.active()) return local.gather(-1, ids.unsqueeze(-1)).squeeze(-1);
  torch::Tensor local_ids = ids - vocab.start;
  torch::Tensor held = (local_ids >= 0).logical_and(local_ids < vocab.size);
  torch::Tensor picked = local.gather(-1, local_ids.clamp(0, vocab.size - 1).unsqueeze(-1)).squeeze(-1);
  return reduce_from_tensor_parallel(picked.masked_fill(held.logical_not(), 0.0), tp);
}

NextTokens sample_vocab_parallel(const torch::Tensor& local, Shard vocab, int64_t vocab_size,
                                 const TensorParallel& tp, const SamplingOptions& o, at::Generator& shared,
                                 at::Generator& own) {
  if (!tp.active()) return sample_next_tokens(local, o, shared);
  torch::Tensor scores = local.to(torch::kFloat32);
  if (o.greedy) {
    auto [best, index] = scores.max(-1);
    auto [value, tokens] = best_over_ranks(best, index + vocab.start, tp);
    return {tokens, value - vocab_log_sum_exp(scores, tp)};
  }
  if (o.temperature != 1.0) scores = scores / o.temperature;
  torch::Tensor tokens;
  if (o.top_k > 0 && o.top_k < vocab_size) {
    auto [candidates, ids] = top_k_over_ranks(scores, o.top_k, vocab, tp);
    torch::Tensor filtered = filter_top_p(filter_top_k(candidates, o.top_k), o.top_p);
    torch::Tensor pick = at::multinomial(filtered.softmax(-1), 1, /*replacement=*/false, shared);
    tokens = ids.gather(-1, pick).squeeze(-1);
  } else if (o.top_p < 1.0) {
    return sample_next_tokens(gather_shards(local, 1, vocab_size, tp), o, shared);
  } else {
    auto [best, index] = (scores + gumbel_noise(scores, own)).max(-1);
    tokens = best_over_ranks(best, index + vocab.start, tp).second;
  }
  return {tokens, vocab_logit_of(scores, tokens, vocab, tp) - vocab_log_sum_exp(scores, tp)};
}

}  // namespace rlwb::workers::model
