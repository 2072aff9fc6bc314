#include "workers/model/adamw_kernel.h"

#include <cmath>

namespace rlwb::workers::model {

// Cloned for AVX-512 and AVX2, picked at load time by the CPU (GCC's
// target_clones); the file's flags (workers/CMakeLists.txt: -O3,
// -fno-math-errno so sqrt vectorises, -ffp-contract=off so no variant
// fuses) let each clone vectorise the loop.
__attribute__((target_clones("avx512f", "avx2", "default"))) void adamw_update_range(
    float* __restrict values, const float* __restrict gradients, float* __restrict exp_avg,
    float* __restrict exp_avg_sq, int64_t begin, int64_t end, const AdamWStep& s) {
  const float decay = s.decay, w1 = s.w1, beta2 = s.beta2, w2 = s.w2, root_c2 = s.root_c2, eps = s.eps,
              step = s.step;
  for (int64_t i = begin; i < end; ++i) {
    const float g = gradients[i];
    const float m = exp_avg[i] + w1 * (g - exp_avg[i]);  // lerp_ (weight < 0.5)
    const float v = exp_avg_sq[i] * beta2 + w2 * g * g;
    const float denominator = std::sqrt(v) / root_c2 + eps;
    exp_avg[i] = m;
    exp_avg_sq[i] = v;
    values[i] = values[i] * decay + step * m / denominator;
  }
}

}  // namespace rlwb::workers::model
