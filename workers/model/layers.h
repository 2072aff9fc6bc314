// The equations of a Llama/Qwen2 decoder layer as free functions on
// tensors, so that each can be checked by hand (tests/workers/model/layers_test.cpp)
// and the Transformer (transformer.h) reads as a composition of them.
//
// Shapes: B batch, T query positions, S key positions, H query heads,
// Hkv key/value heads, D head dimension.
#pragma once

#include <torch/types.h>

#include "workers/model/transformer_config.h"

namespace rlwb::workers::model {

// RMSNorm(x) = weight * x / sqrt(mean(x^2 over the last dim) + eps),
// normalised in float32 and cast back to x's dtype before the weight is
// applied (as HF does).
torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps);

// SwiGLU's gate: silu(gate) * up, silu(g) = g / (1 + exp(-g)). On CPU
// float32 one pass forward and one backward (swiglu_kernel.h), for gate and
// up whose rows of F values are evenly spaced (projections, or the halves
// of one packed product); other tensors go through ATen's silu and mul.
torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up);

// Rotary embedding frequencies inv_freq[i] = theta^(-2i/D), i < D/2, with
// the config's rope scaling (linear, llama3) applied. float32, CPU.
torch::Tensor rope_inverse_frequencies(const TransformerConfig& config);

// Tables [positions, D] for positions 0..positions-1 in HF's "rotate half"
// layout: angle p * inv_freq[i] at columns i and i + D/2. `sin` has its
// first half negated, so that rotate_half(x) * sin(angle) becomes
// roll(x, D/2) * sin (one copy instead of split, negate and concatenate).
struct RopeTables {
  torch::Tensor cos;  // cos(angle)
  torch::Tensor sin;  // [-sin(angle[:D/2]), sin(angle[D/2:])]
};
RopeTables rope_tables(const TransformerConfig& config, int64_t positions);

// RoPE(x) = x * cos + rotate_half(x) * sin(angle), rotate_half([x1, x2]) =
// [-x2, x1] = roll(x, D/2) * [-1, 1]. x [B, H, T, D]; cos and sin [B, 1, T, D]
// or [1, 1, T, D] (rows of RopeTables gathered by position id, sin
// sign-folded as there). On CPU float32 one pass forward and one backward
// (rope_kernel.h); other tensors through ATen's roll, mul and addcmul.
torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin);

// Which keys each query may attend to: [B, 1, T, S] bool, true = attend.
// Query t sits at key position S - T + t; it sees keys j <= S - T + t whose
// key_mask[b, j] is 1. A padding query also sees itself, so that no row is
// empty (an empty softmax row would be NaN, and 0 * NaN poisons the next
// layer); nothing reads a padding position's output.
torch::Tensor causal_padding_mask(const torch::Tensor& key_mask, int64_t queries);

// softmax(q k^T / sqrt(D) masked) v, query head h using key/value head
// h / (H / Hkv) (grouped-query attention). q [B, H, T, D], k and v
// [B, Hkv, S, D]; mask [B, 1, T, S] bool, or undefined together with
// causal=true (plain causal, S == T) or causal=false (attend to all keys).
// Returns [B, H, T, D]. On CPU, fewer than kMinCpuAttentionKeys keys run
// RLWB's own kernel in float32 (short_attention.h), and in other dtypes
// are padded up to it with masked-out zeros (same result; torch's CPU
// softmax is far slower on shorter rows).
constexpr int64_t kMinCpuAttentionKeys = 16;
torch::Tensor grouped_query_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& mask, bool causal);

// Position ids of a left-padded batch: the number of real tokens before
// each position; padding positions get 0. mask [B, S] of 0/1.
torch::Tensor position_ids_from_mask(const torch::Tensor& mask);

}  // namespace rlwb::workers::model
