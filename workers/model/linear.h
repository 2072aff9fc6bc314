// y = x W^T + b, the product of every linear layer of the Transformer
// (transformer.h): its projections, MLP and language-model head.
//
// On CPU float32 both entry points go through oneDNN's matmul instead of
// the dense sgemm behind torch::nn::Linear: on this project's CPU
// (bench/RESULTS.md, "Model") oneDNN is about 2x faster at hundreds of
// rows (training, prefill) and, on a weight reordered once into its
// blocked layout, about 1.5x faster at the handful of rows of a decoding
// step. The result is the same float32 product up to summation order
// (~1e-6 relative). Other devices and dtypes (CUDA, float16/bfloat16), or
// a build without oneDNN, use torch's linear.
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
#include <utility>
#include <vector>

namespace rlwb::workers::model {

// x [..., in], weight [out, in], bias [out] or undefined -> [..., out].
// Pass torch::Tensor() for no bias: `{}` is ambiguous with at::linear,
// which argument-dependent lookup also finds.
torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias);

// Whether linear() and PackedLinear use oneDNN for this tensor (tests).
bool uses_onednn(const torch::Tensor& t);

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
  int calls_ = 0;  // calls since the weights last changed
  std::vector<std::pair<const void*, int64_t>> sources_;  // data pointer, version of every source
};

}  // namespace rlwb::workers::model
