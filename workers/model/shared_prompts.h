// Rows that share a prompt. A GRPO-style batch holds each prompt n times
// (n samples of it), and under causal attention a prompt's states do not
// depend on what follows it: generation's prefill and the scoring passes
// (sequence_scores.h) run each distinct prompt once and copy its KV cache
// to the rows that share it. The result equals the row-by-row pass up to
// float rounding (tests/workers/model/sequence_scores_test.cpp).
#pragma once

#include <torch/types.h>

#include <optional>

namespace rlwb::workers::model {

struct DistinctPrompts {
  torch::Tensor ids, mask;  // [U, P]: each distinct (ids, mask) row once
  torch::Tensor prompt_of;  // [B] int64: the index into the U prompts of each row
  int64_t count() const { return ids.size(0); }
};

// prompt_ids, prompt_mask [B, P]. Rows are the same prompt when ids and
// mask agree at every column (so left padding must agree too).
DistinctPrompts distinct_prompts(const torch::Tensor& prompt_ids, const torch::Tensor& prompt_mask);

// The distinct prompts when running them once, then the rows against their
// copied caches, beats one pass over all rows; otherwise nothing. The
// second pass costs a pass's worth of fixed per-operation work, so sharing
// is worth it when the rows hold each prompt at least twice on average
// (2U <= B).
std::optional<DistinctPrompts> prompts_worth_sharing(const torch::Tensor& prompt_ids,
                                                     const torch::Tensor& prompt_mask);

}  // namespace rlwb::workers::model
