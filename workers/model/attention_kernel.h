// Attention over short rows of float32 on the CPU, forward and backward in
// one pass each: grouped_query_attention's kernel for few keys (layers.h),
// kept in its own file so that it alone is compiled for vectorisation.
//
// For a query row q_i of head h and the keys and values of its KV head
// g = h / (H / H_kv) (grouped-query attention, as SDPA's enable_gqa):
//   forward   s_ij = scale q_i . k_j over the keys j the mask allows,
//             p_ij = softmax_j(s_ij),  o_i = sum_j p_ij v_j
//   backward  dp_ij = do_i . v_j,  ds_ij = p_ij (dp_ij - sum_j p_ij dp_ij),
//             dq_i = scale sum_j ds_ij k_j,  dk_j = scale sum_i ds_ij q_i,
//             dv_j = sum_i p_ij do_i  (dk, dv summed over the group's heads)
// ATen's CPU flash attention runs each (batch, head) as blocked GEMMs
// through MKL, whose fixed cost per call is most of the work when a row
// has a few keys, and below 16 keys RLWB also had to pad the rows to 16
// (layers.h): this kernel computes the scores of a query against every
// key at once, vectorised over the keys (the keys transposed once per KV
// head), and the weighted sums vectorised over D. It takes up to
// kAttentionKernelMaxKeys keys; short_attention.h decides which calls it
// gets (measured: fewer than 16 keys). The forward keeps p for the
// backward (B H T S floats), so the backward recomputes nothing. exp is
// exp_poly.h's; no fused multiply-adds (the file's flags), so every CPU
// variant gives the same bits. A query row whose mask allows no key gives 0 (and gradient
// 0), where ATen's math gives NaN; RLWB's masks always allow the query's
// own position.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

// Strides in floats of a [B, heads, rows, D] tensor whose D is contiguous.
struct HeadRows {
  int64_t batch, head, row;
};

struct AttentionLayout {
  int64_t batch, heads, kv_heads, queries, keys, dim;
  HeadRows q, k, v, out;
  // A boolean mask broadcast to [B, heads, queries, keys] by its strides
  // (0 where it broadcasts), or null for none.
  const bool* mask = nullptr;
  int64_t mask_batch = 0, mask_head = 0, mask_query = 0, mask_key = 0;
  bool causal = false;  // query i also sees only keys j <= i (queries == keys)
  float scale = 1.0f;
};

// The largest key count the kernel takes (its rows of scores live on the
// stack).
constexpr int64_t kAttentionKernelMaxKeys = 128;

// Units [begin, end) of the B * H_kv units, each one KV head of one
// sequence with the H / H_kv query heads that read it. `probs`, when not
// null, receives p as a contiguous [B, H, queries, keys] tensor (0 where
// masked), for attention_backward_units.
void attention_forward_units(const float* q, const float* k, const float* v, float* out, float* probs,
                             const AttentionLayout& layout, int64_t begin, int64_t end);

// The gradient coming in (laid out as the forward's out) and the three
// going out (as q, k and v), each with its own strides.
struct AttentionGradients {
  const float* d_out;
  float *dq, *dk, *dv;
  HeadRows d_out_rows, dq_rows, dk_rows, dv_rows;
};

// The backward of the same units, from the forward's `probs`. Each unit
// writes its rows of dq, dk and dv whole, so units may run in parallel.
void attention_backward_units(const float* q, const float* k, const float* v, const float* probs,
                              const AttentionGradients& gradients, const AttentionLayout& layout,
                              int64_t begin, int64_t end);

}  // namespace rlwb::workers::model
