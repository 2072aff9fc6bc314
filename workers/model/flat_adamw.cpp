#include "workers/model/flat_adamw.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace rlwb::workers::model {

FlatAdamW::FlatAdamW(std::vector<torch::Tensor> params, AdamWSettings settings)
    : params_(std::move(params)), settings_(settings) {
  if (params_.empty()) throw std::invalid_argument("FlatAdamW: no parameters to train");
  int64_t total = 0;
  for (const auto& p : params_) {
    if (p.scalar_type() != params_[0].scalar_type() || p.device() != params_[0].device())
      throw std::invalid_argument("FlatAdamW: every parameter must have the same dtype and device");
    offsets_.push_back(total);
    total += p.numel();
  }
  torch::NoGradGuard no_grad;
  const auto options = params_[0].options().requires_grad(false);
  values_ = torch::empty({total}, options);
  gradients_ = torch::zeros({total}, options);
  exp_avg_ = torch::zeros({total}, options);
  exp_avg_sq_ = torch::zeros({total}, options);
  for (size_t i = 0; i < params_.size(); ++i)
    values_.narrow(0, offsets_[i], params_[i].numel()).copy_(params_[i].detach().reshape({-1}));
  adopt();
}

void FlatAdamW::restore(const torch::Tensor& exp_avg, const torch::Tensor& exp_avg_sq, int64_t steps) {
  if (exp_avg.numel() != exp_avg_.numel() || exp_avg_sq.numel() != exp_avg_sq_.numel())
    throw std::invalid_argument("FlatAdamW: saved moments hold " + std::to_string(exp_avg.numel()) +
                                " values, this optimizer's parameters " + std::to_string(exp_avg_.numel()));
  torch::NoGradGuard no_grad;
  exp_avg_.copy_(exp_avg.reshape({-1}));
  exp_avg_sq_.copy_(exp_avg_sq.reshape({-1}));
  steps_ = steps;
}

void FlatAdamW::adopt() {
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    torch::Tensor& p = params_[i];
    const int64_t n = p.numel();
    torch::Tensor value = values_.narrow(0, offsets_[i], n).view(p.sizes());
    if (p.data_ptr() != value.data_ptr()) {  // new or replaced since the last call
      value.copy_(p.detach());
      p.set_data(value);
    }
    torch::Tensor grad = gradients_.narrow(0, offsets_[i], n).view(p.sizes());
    const torch::Tensor& current = p.grad();
    if (!current.defined()) {
      grad.zero_();
      p.mutable_grad() = grad;
    } else if (current.data_ptr() != grad.data_ptr()) {
      grad.copy_(current);
      p.mutable_grad() = grad;
    }
  }
}

torch::Tensor& FlatAdamW::flat_gradients() {
  adopt();
  return gradients_;
}

double FlatAdamW::clip_gradients(double max_norm) {
  adopt();
  return clip_gradients(max_norm, gradients_.norm().item<double>());
}

double FlatAdamW::clip_gradients(double max_norm, double norm) {
  adopt();
  const double scale = max_norm / (norm + 1e-6);
  if (scale < 1.0) gradients_.mul_(scale);
  return norm;
}

namespace {

// One AdamW update of float32 CPU buffers in a single pass over memory.
// The same arithmetic, in the same order and precision, as the kernels of
// torch.optim.AdamW's single-tensor path (mul_, lerp_, mul_ + addcmul_,
// sqrt / c + eps, addcdiv_), which take eight passes; the update is memory
// bound, so one pass is several times faster.
void adamw_in_one_pass(float* values, const float* gradients, float* exp_avg, float* exp_avg_sq, int64_t n,
                       const AdamWSettings& s, double lr, double correction1, double correction2) {
  const float decay = static_cast<float>(1.0 - lr * s.weight_decay);
  const bool decays = s.weight_decay != 0;
  const float w1 = static_cast<float>(1.0 - s.beta1), beta2 = static_cast<float>(s.beta2);
  const float w2 = static_cast<float>(1.0 - s.beta2), eps = static_cast<float>(s.eps);
  const float root_c2 = static_cast<float>(std::sqrt(correction2));
  const float step = static_cast<float>(-lr / correction1);
  at::parallel_for(0, n, 1 << 14, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float g = gradients[i];
      const float m = exp_avg[i] + w1 * (g - exp_avg[i]);  // lerp_ (weight < 0.5)
      const float v = exp_avg_sq[i] * beta2 + w2 * g * g;
      const float denominator = std::sqrt(v) / root_c2 + eps;
      const float p = decays ? values[i] * decay : values[i];
      exp_avg[i] = m;
      exp_avg_sq[i] = v;
      values[i] = p + step * m / denominator;
    }
  });
}

}  // namespace

void FlatAdamW::step(double lr) {
  adopt();
  torch::NoGradGuard no_grad;
  ++steps_;
  const double beta1 = settings_.beta1, beta2 = settings_.beta2;
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(steps_));
  if (values_.is_cpu() && values_.scalar_type() == torch::kFloat32) {
    adamw_in_one_pass(values_.data_ptr<float>(), gradients_.data_ptr<float>(), exp_avg_.data_ptr<float>(),
                      exp_avg_sq_.data_ptr<float>(), values_.numel(), settings_, lr, correction1,
                      correction2);
  } else {
    if (settings_.weight_decay != 0) values_.mul_(1.0 - lr * settings_.weight_decay);
    exp_avg_.lerp_(gradients_, 1.0 - beta1);
    exp_avg_sq_.mul_(beta2).addcmul_(gradients_, gradients_, 1.0 - beta2);
    torch::Tensor denominator = (exp_avg_sq_.sqrt() / std::sqrt(correction2)).add_(settings_.eps);
    values_.addcdiv_(exp_avg_, denominator, -lr / correction1);
  }
  // The parameters are views that autograd does not know of: tell the
  // caches that watch their version counters that they changed.
  for (auto& p : params_) p.unsafeGetTensorImpl()->bump_version();
}

void FlatAdamW::zero_grad() { gradients_.zero_(); }

}  // namespace rlwb::workers::model
