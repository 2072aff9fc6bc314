#include "workers/model/swiglu_kernel.h"

#include "workers/model/exp_poly.h"

namespace rlwb::workers::model {

// Cloned for AVX-512 and AVX2, picked at load time by the CPU (GCC's
// target_clones), as adamw_kernel.cpp.
__attribute__((target_clones("avx512f", "avx2", "default"))) void swiglu_forward_rows(
    const float* gate, const float* up, float* out, const SwigluRows& l, int64_t begin, int64_t end) {
  const int64_t columns = l.columns;
  for (int64_t row = begin; row < end; ++row) {
    const float* __restrict g = gate + row * l.gate_stride;
    const float* __restrict u = up + row * l.up_stride;
    float* __restrict y = out + row * l.out_stride;
    for (int64_t j = 0; j < columns; ++j) y[j] = g[j] / (1.0f + exp_poly(-g[j])) * u[j];
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void swiglu_backward_rows(
    const float* gate, const float* up, const float* d_out, int64_t d_out_stride, float* d_gate, float* d_up,
    const SwigluRows& l, int64_t begin, int64_t end) {
  const int64_t columns = l.columns;
  for (int64_t row = begin; row < end; ++row) {
    const float* __restrict g = gate + row * l.gate_stride;
    const float* __restrict u = up + row * l.up_stride;
    const float* __restrict dy = d_out + row * d_out_stride;
    float* __restrict dg = d_gate + row * l.out_stride;
    float* __restrict du = d_up + row * l.out_stride;
    for (int64_t j = 0; j < columns; ++j) {
      const float s = 1.0f / (1.0f + exp_poly(-g[j]));
      du[j] = dy[j] * (g[j] * s);
      dg[j] = dy[j] * u[j] * (s * (1.0f + g[j] * (1.0f - s)));
    }
  }
}

}  // namespace rlwb::workers::model
