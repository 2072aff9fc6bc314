// y = x W^T + b, the product of every linear layer of the Transformer
// (transformer.h): its projections, MLP and language-model head.
//
// On CPU float32 the product goes either through torch's dense sgemm (as
// torch::nn::Linear does, MKL in the torch wheel) or through oneDNN's
// matmul, whichever this CPU runs faster (bench/RESULTS.md, "Model").
// Measured: on an AMD EPYC with AVX-512 (Zen 5) oneDNN was about 2x faster
// at hundreds of rows (training, prefill), because MKL runs its AVX-512
// kernels on Intel CPUs only; on an Intel Xeon with AVX-512 (family 6
// model 167) MKL's sgemm was faster everywhere (the training step 13%,
// generation 18%, the GRPO step 26%); on an AVX2-only AMD Zen 3 MKL was
// faster at every size for the differentiable products (1.3-1.9x at 64
// rows, forward and backward) and for one thread over packed weights,
// while with two threads oneDNN over a weight reordered once into its
// blocked layout made decoding about 10% faster. So by default
// (onednn_by_default) Intel CPUs use the dense product, other AVX-512
// CPUs oneDNN, and the rest oneDNN only in PackedLinear when torch runs
// more than one thread (set_cpu_matmul or RLWB_CPU_MATMUL=dense|onednn|
// auto overrides). The two
// give the same float32 product up to summation order (~1e-6 relative).
// Other devices and dtypes (CUDA, float16/bfloat16), or a build without
// oneDNN, use torch's linear.
//
// - linear(): differentiable (x, weight and bias get gradients, each GEMM
//   of the backward also through oneDNN); training passes.
// - PackedLinear: passes without autograd (generation, reference
//   log-probs), over a copy of one or more layers' weights concatenated
//   along the output dimension (e.g. [wq; wk; wv]). The copy is rebuilt
//   when a source parameter changes (its storage moves or, for a tensor
//   with a version counter, its version moves), so an optimizer step is
//   seen by the next call. Packing costs about as much as 5-10 small
//   products, so the copy is packed on its kPackAfterCalls-th call with
//   the same weights (a 64-token generation packs; a 5-token rollout
//   between two optimizer steps does not). Not safe to call from two
//   threads at once.
#pragma once

#include <torch/types.h>

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

namespace rlwb::workers::model {

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out].
// Pass torch::Tensor() for no bias: `{}` is ambiguous with at::linear,
// which argument-dependent lookup also finds.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// Which product linear() and PackedLinear use for CPU float32 tensors:
// kAuto as described above, or the one named for both.
enum class CpuMatmul { kAuto, kDense, kOneDnn };
// The choice in effect: set_cpu_matmul's, else RLWB_CPU_MATMUL's (dense,
// onednn, or auto), else kAuto. Throws ModelError for another
// RLWB_CPU_MATMUL value.
CpuMatmul cpu_matmul();
// The choice a value of RLWB_CPU_MATMUL names ("" = auto).
CpuMatmul cpu_matmul_from(const std::string& value);
// Overrides the choice for this process (tests, benchmarks). kOneDnn
// without oneDNN in torch's build falls back to the dense product.
void set_cpu_matmul(CpuMatmul choice);

// Whether linear() (packed_weight false) or PackedLinear (true) uses
// oneDNN for this tensor.
bool uses_onednn(const torch::Tensor& t, bool packed_weight = false);

// The automatic choice for a CPU (kAuto): oneDNN or not, from what was
// measured (above).
struct CpuTraits {
  bool intel = false;   // GenuineIntel: MKL's AVX-512 kernels run
  bool avx512 = false;  // AVX-512F
};
CpuTraits this_cpu();
bool onednn_by_default(const CpuTraits& cpu, bool packed_weight, int threads);

class PackedLinear {
 public:
  // x [..., in] -> [..., sum of the weights' out]. weights: [out_i, in];
  // biases: one per weight, all defined or all undefined.
  torch::Tensor operator()(const torch::Tensor& x, std::initializer_list<torch::Tensor> weights,
                           std::initializer_list<torch::Tensor> biases);

 private:
  void refresh(std::initializer_list<torch::Tensor> weights, std::initializer_list<torch::Tensor> biases);

  static constexpr int kPackAfterCalls = 8;

  torch::Tensor weight_;  // dense concatenation, or packed (oneDNN)
  torch::Tensor bias_;
  bool packed_ = false;
  int calls_ = 0;                                         // calls since the weights last changed
  std::vector<std::pair<const void*, int64_t>> sources_;  // data pointer, version of every source
};

}  // namespace rlwb::workers::model
