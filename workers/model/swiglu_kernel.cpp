#include "workers/model/swiglu_kernel.h"

#include <bit>

namespace rlwb::workers::model {

namespace {

// exp(x) as Cephes' expf computes it: x = n ln2 + r with |r| <= ln2 / 2
// (ln2 in two parts, so r keeps its bits), exp(r) by a degree-7 polynomial,
// 2^n built in the exponent bits. Plain arithmetic, so the loops that call
// it vectorise: n is rounded by adding and taking away 1.5 * 2^23
// (std::floor does not vectorise without -fno-trapping-math), and the
// range is bounded on the integer n, not on x: 2^n is 0 below 2^-126 and
// infinity above 2^127, so exp underflows to 0 and overflows to infinity
// as it should. (A clamp on x let GCC specialise the clamped lanes to
// constants, and their results, computed for every lane and thrown away,
// were subnormal for ordinary inputs: a microcode assist each, 7x slower.)
inline float exp_poly(float x) {
  constexpr float kRound = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  const float n = (x * 1.44269504088896341f + kRound) - kRound;
  const float r = (x - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float e = p * (r * r) + r + 1.0f;
  int exponent = static_cast<int>(n);
  exponent = exponent < -127 ? -127 : exponent;  // 2^-127 -> bits 0: exp is 0
  exponent = exponent > 128 ? 128 : exponent;    // 2^128 -> bits of infinity
  return e * std::bit_cast<float>((exponent + 127) << 23);
}

}  // namespace

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
