// SwiGLU's gate of float32 rows on the CPU, one pass over memory: the
// kernel of swiglu() (layers.h), forward and backward, kept in its own file
// so that it alone is compiled for vectorisation.
//
// With s = sigmoid(g) = 1 / (1 + exp(-g)):
//   forward   out = g s u                                  (silu(g) * u)
//   backward  dg  = dy u s (1 + g (1 - s)),  du = dy g s
// ATen computes the forward as silu then mul (two passes and a
// temporary) and autograd the backward as mul, silu_backward and mul; this
// is one pass each way. exp is a vectorisable polynomial (Cephes' expf,
// within 2 ulp of the exact value for |x| <= 88, 0 below and infinity
// above), so the results differ from ATen's in the last bits, not more:
// measured over g in [-100, 100], silu within 1.7e-7 relative and its
// derivative within 4.9e-7. Gates beyond +-1.4e9 (2^31 ln 2, where the
// exponent no longer fits an int) are outside the kernel's range.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

// Rows [begin, end) of `columns` values each; row r of a tensor t starts at
// t + r * t_stride (floats).
struct SwigluRows {
  int64_t columns;
  int64_t gate_stride, up_stride, out_stride;
};

// out[r, j] = silu(gate[r, j]) * up[r, j].
void swiglu_forward_rows(const float* gate, const float* up, float* out, const SwigluRows& layout,
                         int64_t begin, int64_t end);

// d_gate and d_up (row strides: out_stride) from the gradient d_out (its
// row stride: `d_out_stride`).
void swiglu_backward_rows(const float* gate, const float* up, const float* d_out, int64_t d_out_stride,
                          float* d_gate, float* d_up, const SwigluRows& layout, int64_t begin, int64_t end);

}  // namespace rlwb::workers::model
