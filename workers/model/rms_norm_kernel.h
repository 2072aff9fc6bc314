// RMSNorm of float32 rows on the CPU, one pass per row each way: the
// kernel of rms_norm() (layers.h), kept in its own file so that it alone is
// compiled for vectorisation.
//
// For a row x of `dim` values, weight w and epsilon eps:
//   forward   r = 1 / sqrt(mean(x^2) + eps),  y = (x r) w
//   backward  g = dy w,  dx = r (g - (x r) mean(g x r)),
//             dw = sum over rows of dy (x r)
// ATen's rms_norm is six operators, each a pass over the rows, and
// autograd differentiates each on its own (about fifteen kernels per norm
// in the backward); here each direction is one pass (two reads of a row
// that stays in cache). The forward hands back r per row, so the backward
// keeps x and r rather than the normalised rows. Sums run in 16 lanes
// (float_lanes.h) added in a fixed order, so the results differ from
// ATen's in the last bits, not more.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

// Rows [begin, end) of x (contiguous, `dim` floats each): y (same layout)
// and, when `roots` is not null, roots[row] = r.
void rms_norm_forward_rows(const float* x, const float* weight, int64_t dim, float eps, float* y,
                           float* roots, int64_t begin, int64_t end);

// Rows [begin, end): dx (contiguous like x) from dy (contiguous), x and the
// forward's roots; the rows' share of dw is added to `weight_grad` (dim
// floats, one buffer per thread: the caller sums them).
void rms_norm_backward_rows(const float* x, const float* weight, const float* roots, const float* dy,
                            int64_t dim, float* dx, float* weight_grad, int64_t begin, int64_t end);

}  // namespace rlwb::workers::model
