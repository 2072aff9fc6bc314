#include "workers/model/rope_kernel.h"

namespace rlwb::workers::model {

namespace {

// One row, the two halves apart so that each loop is a plain vector loop
// (partner = j + h in the first half, j - h in the second).
inline void rope_row(const float* __restrict x, const float* __restrict c, const float* __restrict s,
                     float* __restrict out, int64_t half, bool backward) {
  const float* partner_sin_low = backward ? s + half : s;   // sin[j ^ h] or sin[j], j < h
  const float* partner_sin_high = backward ? s : s + half;  // the same, j >= h
  for (int64_t j = 0; j < half; ++j) out[j] = x[j] * c[j] + x[j + half] * partner_sin_low[j];
  for (int64_t j = 0; j < half; ++j) out[half + j] = x[half + j] * c[half + j] + x[j] * partner_sin_high[j];
}

}  // namespace

// Cloned for AVX-512 and AVX2, picked at load time by the CPU (GCC's
// target_clones), as adamw_kernel.cpp.
__attribute__((target_clones("avx512f", "avx2", "default"))) void rope_rows(const float* x, const float* cos,
                                                                            const float* sin, float* out,
                                                                            const RopeRows& l, int64_t begin,
                                                                            int64_t end, bool backward) {
  const int64_t half = l.dim / 2;
  for (int64_t row = begin; row < end; ++row) {
    const int64_t t = row % l.positions, bh = row / l.positions;
    const int64_t h = bh % l.heads, b = bh / l.heads;
    rope_row(x + b * l.x_batch + h * l.x_head + t * l.x_position, cos + b * l.cos_batch + t * l.cos_position,
             sin + b * l.sin_batch + t * l.sin_position,
             out + b * l.out_batch + h * l.out_head + t * l.out_position, half, backward);
  }
}

}  // namespace rlwb::workers::model
