#include "workers/model/attention_kernel.h"

#include "workers/model/exp_poly.h"
#include "workers/model/float_lanes.h"

#include <cmath>
#include <vector>

namespace rlwb::workers::model {

namespace {

// Keys padded to a whole number of 16-float vectors: the score loops then
// run whole vectors, and the padding's scores are never used.
constexpr int64_t padded(int64_t keys) { return (keys + kLane - 1) / kLane * kLane; }

// rows[d * stride + j] = source row j's value d, for j < keys; 0 beyond.
void transpose_rows(const float* source, int64_t row_stride, int64_t keys, int64_t dim, float* rows,
                    int64_t stride) {
  for (int64_t d = 0; d < dim; ++d) {
    float* __restrict to = rows + d * stride;
    for (int64_t j = 0; j < keys; ++j) to[j] = source[j * row_stride + d];
    for (int64_t j = keys; j < stride; ++j) to[j] = 0.0f;
  }
}

// allowed[j] (1 or 0) for query i of head h of sequence b, j < stride
// (the padding keys beyond l.keys: 0).
void allowed_keys(const AttentionLayout& l, int64_t b, int64_t h, int64_t i, int64_t stride, float* allowed) {
  const int64_t visible = l.causal ? i + 1 : l.keys;
  if (l.mask == nullptr) {
    for (int64_t j = 0; j < l.keys; ++j) allowed[j] = j < visible ? 1.0f : 0.0f;
  } else {
    const bool* row = l.mask + b * l.mask_batch + h * l.mask_head + i * l.mask_query;
    const int64_t step = l.mask_key;
    for (int64_t j = 0; j < l.keys; ++j) allowed[j] = j < visible && row[j * step] ? 1.0f : 0.0f;
  }
  for (int64_t j = l.keys; j < stride; ++j) allowed[j] = 0.0f;
}

// scores[j] = sum_d factor[d] * rows[d * stride + j], j < stride: one
// 16-key block at a time, with four sums (over d mod 4) in flight so that
// the adds do not wait on each other.
inline void dot_with_columns(const float* factor, const float* rows, int64_t dim, int64_t stride, float scale,
                             float* __restrict scores) {
  for (int64_t block = 0; block < stride; block += kLane) {
    const float* column = rows + block;
    Lanes a = {}, b = {}, c = {}, e = {};
    int64_t d = 0;
    for (; d + 4 <= dim; d += 4) {
      a += (factor[d] * scale) * load(column + d * stride);
      b += (factor[d + 1] * scale) * load(column + (d + 1) * stride);
      c += (factor[d + 2] * scale) * load(column + (d + 2) * stride);
      e += (factor[d + 3] * scale) * load(column + (d + 3) * stride);
    }
    for (; d < dim; ++d) a += (factor[d] * scale) * load(column + d * stride);
    store(scores + block, (a + b) + (c + e));
  }
}

// The softmax over the allowed keys of scores (allowed[j] 1 or 0, j <
// stride), into p (0 where not allowed). Each loop is elementwise, so that
// it vectorises: the largest score and the sum are kept per lane of a
// 16-key block and combined at the end (a float reduction written as one
// running sum would not vectorise without reassociation).
inline void masked_softmax(const float* scores, const float* allowed, int64_t stride, float* __restrict p) {
  float lanes[kLane];
  for (int64_t t = 0; t < kLane; ++t) lanes[t] = -HUGE_VALF;
  for (int64_t block = 0; block < stride; block += kLane)
    for (int64_t t = 0; t < kLane; ++t) {
      const float s = allowed[block + t] != 0.0f ? scores[block + t] : -HUGE_VALF;
      lanes[t] = s > lanes[t] ? s : lanes[t];
    }
  float top = lanes[0];
  for (int64_t t = 1; t < kLane; ++t) top = lanes[t] > top ? lanes[t] : top;
  if (top == -HUGE_VALF) {  // no key to attend: 0 (see the header)
    for (int64_t j = 0; j < stride; ++j) p[j] = 0.0f;
    return;
  }
  for (int64_t j = 0; j < stride; ++j) {
    const float e = exp_poly(scores[j] - top);
    p[j] = allowed[j] != 0.0f ? e : 0.0f;
  }
  for (int64_t t = 0; t < kLane; ++t) lanes[t] = 0.0f;
  for (int64_t block = 0; block < stride; block += kLane)
    for (int64_t t = 0; t < kLane; ++t) lanes[t] += p[block + t];
  float sum = 0.0f;
  for (int64_t t = 0; t < kLane; ++t) sum += lanes[t];
  const float inverse = 1.0f / sum;
  for (int64_t j = 0; j < stride; ++j) p[j] *= inverse;
}

// to[d] += weight * from[d]: vectorised over d.
inline void add_scaled(float* __restrict to, const float* __restrict from, float weight, int64_t dim) {
  for (int64_t d = 0; d < dim; ++d) to[d] += weight * from[d];
}

}  // namespace

// Cloned for AVX-512 and AVX2, picked at load time by the CPU (GCC's
// target_clones), as adamw_kernel.cpp.
__attribute__((target_clones("avx512f", "avx2", "default"))) void attention_forward_units(
    const float* q, const float* k, const float* v, float* out, float* probs, const AttentionLayout& l,
    int64_t begin, int64_t end) {
  const int64_t group = l.heads / l.kv_heads, stride = padded(l.keys), dim = l.dim;
  std::vector<float> transposed(static_cast<size_t>(dim * stride));
  float* keys_by_dim = transposed.data();
  alignas(64) float scores[kAttentionKernelMaxKeys], p[kAttentionKernelMaxKeys];
  alignas(64) float allowed[kAttentionKernelMaxKeys];
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t b = unit / l.kv_heads, g = unit % l.kv_heads;
    const float* k_rows = k + b * l.k.batch + g * l.k.head;
    const float* v_rows = v + b * l.v.batch + g * l.v.head;
    transpose_rows(k_rows, l.k.row, l.keys, dim, keys_by_dim, stride);
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      for (int64_t i = 0; i < l.queries; ++i) {
        const float* q_row = q + b * l.q.batch + h * l.q.head + i * l.q.row;
        dot_with_columns(q_row, keys_by_dim, dim, stride, l.scale, scores);
        allowed_keys(l, b, h, i, stride, allowed);
        masked_softmax(scores, allowed, stride, p);
        if (probs != nullptr) {
          float* kept = probs + ((b * l.heads + h) * l.queries + i) * l.keys;
          for (int64_t j = 0; j < l.keys; ++j) kept[j] = p[j];
        }
        float* __restrict o = out + b * l.out.batch + h * l.out.head + i * l.out.row;
        for (int64_t d = 0; d < dim; ++d) o[d] = 0.0f;
        for (int64_t j = 0; j < l.keys; ++j)
          if (p[j] != 0.0f) add_scaled(o, v_rows + j * l.v.row, p[j], dim);  // masked: skipped
      }
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void attention_backward_units(
    const float* q, const float* k, const float* v, const float* probs, const AttentionGradients& grads,
    const AttentionLayout& l, int64_t begin, int64_t end) {
  const int64_t group = l.heads / l.kv_heads, stride = padded(l.keys), dim = l.dim;
  std::vector<float> transposed(static_cast<size_t>(dim * stride));
  float* values_by_dim = transposed.data();
  alignas(64) float dp[kAttentionKernelMaxKeys], ds[kAttentionKernelMaxKeys];
  for (int64_t unit = begin; unit < end; ++unit) {
    const int64_t b = unit / l.kv_heads, g = unit % l.kv_heads;
    const float* k_rows = k + b * l.k.batch + g * l.k.head;
    const float* v_rows = v + b * l.v.batch + g * l.v.head;
    float* dk_rows = grads.dk + b * grads.dk_rows.batch + g * grads.dk_rows.head;
    float* dv_rows = grads.dv + b * grads.dv_rows.batch + g * grads.dv_rows.head;
    transpose_rows(v_rows, l.v.row, l.keys, dim, values_by_dim, stride);
    for (int64_t j = 0; j < l.keys; ++j)
      for (int64_t d = 0; d < dim; ++d)
        dk_rows[j * grads.dk_rows.row + d] = dv_rows[j * grads.dv_rows.row + d] = 0.0f;
    for (int64_t h = g * group; h < (g + 1) * group; ++h) {
      for (int64_t i = 0; i < l.queries; ++i) {
        const float* p = probs + ((b * l.heads + h) * l.queries + i) * l.keys;
        const float* q_row = q + b * l.q.batch + h * l.q.head + i * l.q.row;
        const float* do_row =
            grads.d_out + b * grads.d_out_rows.batch + h * grads.d_out_rows.head + i * grads.d_out_rows.row;
        dot_with_columns(do_row, values_by_dim, dim, stride, 1.0f, dp);
        float delta = 0.0f;
        for (int64_t j = 0; j < l.keys; ++j) delta += p[j] * dp[j];
        for (int64_t j = 0; j < l.keys; ++j) ds[j] = p[j] * (dp[j] - delta) * l.scale;
        float* __restrict dq_row =
            grads.dq + b * grads.dq_rows.batch + h * grads.dq_rows.head + i * grads.dq_rows.row;
        for (int64_t d = 0; d < dim; ++d) dq_row[d] = 0.0f;
        for (int64_t j = 0; j < l.keys; ++j) {
          if (p[j] == 0.0f) continue;  // masked (or underflowed): no gradient through it
          add_scaled(dq_row, k_rows + j * l.k.row, ds[j], dim);
          add_scaled(dk_rows + j * grads.dk_rows.row, q_row, ds[j], dim);
          add_scaled(dv_rows + j * grads.dv_rows.row, do_row, p[j], dim);
        }
      }
    }
  }
}

}  // namespace rlwb::workers::model
