// Rotary position embedding of float32 rows on the CPU, one pass over
// memory: apply_rope's kernel (layers.h), forward and backward, kept in its
// own file so that it alone is compiled for vectorisation.
//
// A row is one head's D values at one position; with h = D/2 and the
// sign-folded sine table of rope_tables (sin = [-sin(a), sin(a)]):
//   forward   out[j] = x[j] cos[j] + x[j ^ h] sin[j]
//   backward  dx[j]  = dy[j] cos[j] + dy[j ^ h] sin[j ^ h]
// where j ^ h stands for the partner column (j + h) mod D. ATen computes
// the forward as roll, mul and addcmul (three passes and two temporaries)
// and autograd its backward as four more; this is one pass each way. No
// fused multiply-adds (the file's flags), so every variant gives the same
// bits as the two rounded products and one rounded sum written above.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

// Where the rows lie: x, out [B, H, T, D] and the tables [B, 1, T, D]
// (a batch stride of 0 shares one table), each with its own strides in
// floats for B, H, T and D contiguous.
struct RopeRows {
  int64_t heads, positions, dim;
  int64_t x_batch, x_head, x_position;
  int64_t out_batch, out_head, out_position;
  int64_t cos_batch, cos_position;
  int64_t sin_batch, sin_position;
};

// Rows [begin, end) of the B * H * T rows, in (b, h, t) order: the forward
// above, or with `backward` the backward (x is then dy and out dx).
void rope_rows(const float* x, const float* cos, const float* sin, float* out, const RopeRows& layout,
               int64_t begin, int64_t end, bool backward);

}  // namespace rlwb::workers::model
