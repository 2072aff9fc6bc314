// 16 floats as one value (GCC's vector extension) for the CPU kernels that
// vectorise by hand (attention_kernel.cpp, rms_norm_kernel.cpp): a running
// sum kept in such a value stays in a register (a zmm with AVX-512, two ymm
// with AVX2, four xmm otherwise), where one kept in an array went through
// memory on every step. Each kernel file is compiled per CPU with GCC's
// target_clones, so the same source serves every variant.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

constexpr int64_t kLane = 16;

using Lanes = float __attribute__((vector_size(kLane * sizeof(float))));

// Unaligned load and store of kLane floats.
inline Lanes load(const float* p) {
  Lanes v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, Lanes v) { __builtin_memcpy(p, &v, sizeof v); }

// The sum of a value's lanes, in a fixed order (every variant, same bits).
inline float lane_sum(Lanes v) {
  float sum = 0.0f;
  for (int64_t t = 0; t < kLane; ++t) sum += v[t];
  return sum;
}

}  // namespace rlwb::workers::model
