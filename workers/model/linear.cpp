#include "workers/model/linear.h"

#include <ATen/Config.h>
#include <ATen/Parallel.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <torch/torch.h>

#include <atomic>
#include <cstdlib>
#include <string>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

// Whether oneDNN reads `t` as a dense matrix: row-major, (a 2-D view)
// column-major, or packed by onednn_pack(). Other strides send it down a
// slow generic path: the weight gradient of the GRPO update's last-position
// rows (x [8, 1, 128] with the row stride of [8, 7, 128], passed transposed
// as the weight) took 3 ms instead of ~10 us, a third of the backward.
bool dense_for_onednn(const at::Tensor& t) {
  return t.layout() != c10::kStrided || t.is_contiguous() || (t.dim() == 2 && t.t().is_contiguous());
}

// oneDNN's linear and weight reorder, as ATen registers them for
// torch.compile's CPU backend (aten/src/ATen/native/mkldnn/Linear.cpp).
// Operands in other layouts are copied first (dense_for_onednn).
at::Tensor onednn_linear(const at::Tensor& x_in, const at::Tensor& weight_in, const at::Tensor& bias) {
  const at::Tensor x = dense_for_onednn(x_in) ? x_in : x_in.contiguous();
  const at::Tensor weight = dense_for_onednn(weight_in) ? weight_in : weight_in.contiguous();
  static auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("mkldnn::_linear_pointwise", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const std::optional<at::Tensor>&,
                            c10::string_view, c10::List<std::optional<at::Scalar>>,
                            std::optional<c10::string_view>)>();
  return op.call(x, weight, bias.defined() ? std::optional<at::Tensor>(bias) : std::nullopt, "none",
                 c10::List<std::optional<at::Scalar>>(), "");
}

at::Tensor onednn_pack(const at::Tensor& weight) {
  static auto op = c10::Dispatcher::singleton()
                       .findSchemaOrThrow("mkldnn::_reorder_linear_weight", "")
                       .typed<at::Tensor(const at::Tensor&, std::optional<int64_t>)>();
  return op.call(weight, std::nullopt);
}

// The three GEMMs of a linear layer through oneDNN:
//   y = x W^T + b,  dx = dy W,  dW = dy^T x,  db = sum of dy over rows.
// Two Functions because autograd takes no undefined inputs: with a bias
// and without one.
torch::autograd::tensor_list linear_backward(torch::autograd::AutogradContext* ctx, const torch::Tensor& grad,
                                             bool with_bias) {
  const auto saved = ctx->get_saved_variables();
  const torch::Tensor& x = saved[0];
  const torch::Tensor& weight = saved[1];
  const torch::Tensor dy = grad.reshape({-1, grad.size(-1)});  // [rows, out]
  torch::Tensor dx, dw, db;
  if (ctx->needs_input_grad(0)) dx = onednn_linear(grad, weight.t(), {});
  if (ctx->needs_input_grad(1)) dw = onednn_linear(dy.t(), x.reshape({-1, x.size(-1)}).t(), {});
  if (!with_bias) return {dx, dw};
  if (ctx->needs_input_grad(2)) db = dy.sum(0);
  return {dx, dw, db};
}

struct OneDnnLinear : torch::autograd::Function<OneDnnLinear> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, const torch::Tensor& bias) {
    ctx->save_for_backward({x, weight});
    return onednn_linear(x, weight, bias);
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return linear_backward(ctx, grads[0], /*with_bias=*/true);
  }
};

struct OneDnnLinearNoBias : torch::autograd::Function<OneDnnLinearNoBias> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight) {
    ctx->save_for_backward({x, weight});
    return onednn_linear(x, weight, {});
  }
  static torch::autograd::tensor_list backward(torch::autograd::AutogradContext* ctx,
                                               torch::autograd::tensor_list grads) {
    return linear_backward(ctx, grads[0], /*with_bias=*/false);
  }
};

torch::Tensor concat(std::initializer_list<torch::Tensor> parts) {
  if (!parts.begin()->defined()) return {};
  return parts.size() == 1 ? parts.begin()->detach().contiguous() : torch::cat(parts).detach();
}

std::atomic<int> chosen_matmul{-1};  // -1: not chosen yet, else a CpuMatmul

}  // namespace

CpuMatmul cpu_matmul_from(const std::string& choice) {
  if (choice == "dense") return CpuMatmul::kDense;
  if (choice == "onednn") return CpuMatmul::kOneDnn;
  if (choice != "auto" && !choice.empty())
    throw ModelError("RLWB_CPU_MATMUL=" + choice + ": write dense, onednn or auto (or leave it unset)");
  return CpuMatmul::kAuto;
}

CpuMatmul cpu_matmul() {
  int chosen = chosen_matmul.load(std::memory_order_relaxed);
  if (chosen < 0) {
    const char* value = std::getenv("RLWB_CPU_MATMUL");
    chosen = static_cast<int>(cpu_matmul_from(value != nullptr ? value : "auto"));
    chosen_matmul.store(chosen, std::memory_order_relaxed);
  }
  return static_cast<CpuMatmul>(chosen);
}

void set_cpu_matmul(CpuMatmul choice) {
  chosen_matmul.store(static_cast<int>(choice), std::memory_order_relaxed);
}

bool uses_onednn(const torch::Tensor& t, bool packed_weight) {
  if (!(AT_MKLDNN_ENABLED() && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
        at::globalContext().userEnabledMkldnn()))
    return false;
  switch (cpu_matmul()) {
    case CpuMatmul::kDense:
      return false;
    case CpuMatmul::kOneDnn:
      return true;
    case CpuMatmul::kAuto:
      break;
  }
  static const CpuTraits cpu = this_cpu();
  return onednn_by_default(cpu, packed_weight, at::get_num_threads());
}

CpuTraits this_cpu() {
  __builtin_cpu_init();
  return {.intel = __builtin_cpu_is("intel") != 0, .avx512 = __builtin_cpu_supports("avx512f") != 0};
}

bool onednn_by_default(const CpuTraits& cpu, bool packed_weight, int threads) {
  // Measured (linear.h): MKL wins on Intel; elsewhere oneDNN wins on
  // AVX-512, and on AVX2 only over packed weights with more than one thread.
  if (cpu.intel) return false;
  return cpu.avx512 || (packed_weight && threads > 1);
}

torch::Tensor linear(const torch::Tensor& x, const torch::Tensor& weight, const torch::Tensor& bias) {
  if (!uses_onednn(x) || !uses_onednn(weight) || (bias.defined() && !uses_onednn(bias))) {
    return torch::nn::functional::linear(x, weight, bias);
  }
  return bias.defined() ? OneDnnLinear::apply(x, weight, bias) : OneDnnLinearNoBias::apply(x, weight);
}

void PackedLinear::refresh(std::initializer_list<torch::Tensor> weights,
                           std::initializer_list<torch::Tensor> biases) {
  std::vector<std::pair<const void*, int64_t>> sources;
  sources.reserve(weights.size() + biases.size());
  // Inference tensors (parameters made under InferenceMode) have no version
  // counter; only a change of storage is seen for them.
  for (const auto* list : {&weights, &biases})
    for (const auto& t : *list)
      if (t.defined()) sources.emplace_back(t.data_ptr(), t.is_inference() ? 0 : t._version());
  if (sources == sources_) return;
  torch::NoGradGuard no_grad;
  weight_ = concat(weights);
  bias_ = concat(biases);
  packed_ = false;
  calls_ = 0;
  sources_ = std::move(sources);
}

torch::Tensor PackedLinear::operator()(const torch::Tensor& x, std::initializer_list<torch::Tensor> weights,
                                       std::initializer_list<torch::Tensor> biases) {
  refresh(weights, biases);
  if (!uses_onednn(x, /*packed_weight=*/true) || !uses_onednn(weight_, /*packed_weight=*/true)) {
    if (packed_) return torch::nn::functional::linear(x, concat(weights), bias_);  // e.g. a bf16 input
    return torch::nn::functional::linear(x, weight_, bias_);
  }
  if (!packed_ && ++calls_ >= kPackAfterCalls) {
    torch::NoGradGuard no_grad;
    weight_ = onednn_pack(weight_);
    packed_ = true;
  }
  return onednn_linear(x, weight_, bias_);
}

}  // namespace rlwb::workers::model
