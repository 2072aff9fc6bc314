// The AdamW update of float32 values on the CPU, one pass over memory:
// FlatAdamW's inner loop (flat_adamw.h), kept in its own file so that it
// alone is compiled for vectorisation (bench/RESULTS.md, "Training step").
//
// The same arithmetic, in the same order and precision, as the kernels of
// torch.optim.AdamW's single-tensor path (mul_, lerp_, mul_ + addcmul_,
// sqrt / c + eps, addcdiv_), which take eight passes; the update is memory
// bound, so one pass is several times faster. Every variant (AVX-512, AVX2,
// the default) gives the same bits: IEEE sqrt and division are exact, and
// the file is built without contracting a * b + c into fused multiply-adds.
#pragma once

#include <cstdint>

namespace rlwb::workers::model {

struct AdamWStep {
  float decay;      // 1 - lr * weight_decay (1 without decay)
  float w1;         // 1 - beta1 (lerp's weight)
  float beta2, w2;  // beta2, 1 - beta2
  float root_c2;    // sqrt of the second moment's bias correction
  float eps;
  float step;  // -lr / the first moment's bias correction
};

// values[i], exp_avg[i], exp_avg_sq[i] for i in [begin, end), from gradients[i].
void adamw_update_range(float* values, const float* gradients, float* exp_avg, float* exp_avg_sq,
                        int64_t begin, int64_t end, const AdamWStep& s);

}  // namespace rlwb::workers::model
