// exp(x) for float32 kernels that must vectorise (swiglu_kernel.cpp,
// attention_kernel.cpp): plain arithmetic, no call, so a loop calling it
// compiles to vector instructions; include it only from files compiled with
// the kernels' flags (workers/CMakeLists.txt).
#pragma once

#include <bit>

namespace rlwb::workers::model {

// exp(x) as Cephes' expf computes it: x = n ln2 + r with |r| <= ln2 / 2
// (ln2 in two parts, so r keeps its bits), exp(r) by a degree-7 polynomial,
// 2^n built in the exponent bits: within 2 ulp of the exact value for
// |x| <= 88. n is rounded by adding and taking away 1.5 * 2^23 (std::floor
// does not vectorise without -fno-trapping-math), and the range is bounded
// on the integer n, not on x: 2^n is 0 below 2^-126 and infinity above
// 2^127, so exp underflows to 0 and overflows to infinity as it should. (A
// clamp on x let GCC specialise the clamped lanes to constants, and their
// results, computed for every lane and thrown away, were subnormal for
// ordinary inputs: a microcode assist each, 7x slower.) Beyond +-1.4e9
// (2^31 ln 2, where n no longer fits an int) is outside its range.
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

}  // namespace rlwb::workers::model
