// Attention over rows of few keys (the arithmetic task's prompts and
// responses) in one kernel each way: grouped_query_attention's path for
// float32 on the CPU with at most kShortAttentionMaxKeys keys (layers.h),
// where ATen's flash attention, padded to 16 keys, did the same work with
// more. The kernel and its maths are in attention_kernel.h; this is its
// autograd node and the check of what it takes.
#pragma once

#include <torch/torch.h>

#include <optional>

#include "workers/model/attention_kernel.h"

namespace rlwb::workers::model {

// Below 16 keys the kernel is faster than ATen's padded flash attention,
// forward and backward (at 64 x 4 heads x 12 keys x D 32, one thread:
// forward 0.40 ms vs 0.75, forward + backward 0.82 vs 1.49, a decoding
// step 0.07 vs 0.13); from 16 keys on ATen's unpadded kernel is as fast or
// faster with autograd (1.10 vs 1.10 ms at 16 keys, 0.84 vs 0.58 at 32),
// so it keeps those (bench/RESULTS.md, "Session 30").
constexpr int64_t kShortAttentionMaxKeys = 15;
static_assert(kShortAttentionMaxKeys <= kAttentionKernelMaxKeys);

// grouped_query_attention's result (same arguments, same meaning) through
// the kernel, or nullopt where the kernel does not take the call: not
// float32 on the CPU, more keys than kShortAttentionMaxKeys, a head's D not
// contiguous, a mask that is not bool, or `causal` without a mask when the
// queries are not the keys. With autograd the call is one node whose
// backward is the kernel's.
std::optional<torch::Tensor> short_row_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, const torch::Tensor& mask,
                                                 bool causal);

}  // namespace rlwb::workers::model
