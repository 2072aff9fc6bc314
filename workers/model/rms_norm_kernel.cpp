#include "workers/model/rms_norm_kernel.h"

#include <cmath>

#include "workers/model/float_lanes.h"

namespace rlwb::workers::model {

namespace {

// sum_i a[i] * b[i] over n values: whole vectors in two running sums (so
// that the adds do not all wait on one another), the tail one by one.
inline float dot(const float* a, const float* b, int64_t n) {
  Lanes even = {}, odd = {};
  int64_t i = 0;
  for (; i + 2 * kLane <= n; i += 2 * kLane) {
    even += load(a + i) * load(b + i);
    odd += load(a + i + kLane) * load(b + i + kLane);
  }
  if (i + kLane <= n) {
    even += load(a + i) * load(b + i);
    i += kLane;
  }
  float sum = lane_sum(even + odd);
  for (; i < n; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

// Cloned for AVX-512 and AVX2, picked at load time by the CPU (GCC's
// target_clones), as the other kernels.
__attribute__((target_clones("avx512f", "avx2", "default"))) void rms_norm_forward_rows(
    const float* x, const float* weight, int64_t dim, float eps, float* y, float* roots, int64_t begin,
    int64_t end) {
  const float inverse_dim = 1.0f / static_cast<float>(dim);
  for (int64_t row = begin; row < end; ++row) {
    const float* __restrict in = x + row * dim;
    float* __restrict out = y + row * dim;
    const float r = 1.0f / std::sqrt(dot(in, in, dim) * inverse_dim + eps);
    for (int64_t i = 0; i < dim; ++i) out[i] = (in[i] * r) * weight[i];
    if (roots != nullptr) roots[row] = r;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void rms_norm_backward_rows(
    const float* x, const float* weight, const float* roots, const float* dy, int64_t dim, float* dx,
    float* weight_grad, int64_t begin, int64_t end) {
  const float inverse_dim = 1.0f / static_cast<float>(dim);
  float* __restrict dw = weight_grad;
  for (int64_t row = begin; row < end; ++row) {
    const float* __restrict in = x + row * dim;
    const float* __restrict d_out = dy + row * dim;
    float* __restrict d_in = dx + row * dim;
    const float r = roots[row];
    // mean(g x r) with g = dy w: r mean(dy w x).
    Lanes even = {}, odd = {};
    int64_t i = 0;
    for (; i + 2 * kLane <= dim; i += 2 * kLane) {
      even += load(d_out + i) * load(weight + i) * load(in + i);
      odd += load(d_out + i + kLane) * load(weight + i + kLane) * load(in + i + kLane);
    }
    for (; i + kLane <= dim; i += kLane) even += load(d_out + i) * load(weight + i) * load(in + i);
    float sum = lane_sum(even + odd);
    for (; i < dim; ++i) sum += d_out[i] * weight[i] * in[i];
    const float mean = sum * r * inverse_dim;
    for (int64_t j = 0; j < dim; ++j) {
      const float normed = in[j] * r;
      d_in[j] = r * (d_out[j] * weight[j] - normed * mean);
      dw[j] += d_out[j] * normed;
    }
  }
}

}  // namespace rlwb::workers::model
