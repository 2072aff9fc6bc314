#include "workers/model/flat_adamw.h"

#include "workers/model/adamw_kernel.h"

#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace rlwb::workers::model {

FlatAdamW::FlatAdamW(std::vector<torch::Tensor> params, AdamWSettings settings, ParameterStorage storage)
    : params_(std::move(params)), settings_(settings), storage_(storage) {
  if (params_.empty()) throw std::invalid_argument("FlatAdamW: no parameters to train");
  int64_t total = 0;
  for (const auto& p : params_) {
    if (p.scalar_type() != params_[0].scalar_type() || p.device() != params_[0].device())
      throw std::invalid_argument("FlatAdamW: every parameter must have the same dtype and device");
    if (storage_ == ParameterStorage::kInPlace && !p.is_contiguous())
      throw std::invalid_argument("FlatAdamW: updating parameters in place needs contiguous ones");
    offsets_.push_back(total);
    total += p.numel();
  }
  torch::NoGradGuard no_grad;
  const auto options = params_[0].options().requires_grad(false);
  gradients_ = torch::zeros({total}, options);
  exp_avg_ = torch::zeros({total}, options);
  exp_avg_sq_ = torch::zeros({total}, options);
  if (storage_ == ParameterStorage::kFlatBuffer) {
    values_ = torch::empty({total}, options);
    for (size_t i = 0; i < params_.size(); ++i)
      values_.narrow(0, offsets_[i], params_[i].numel()).copy_(params_[i].detach().reshape({-1}));
  }
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
    if (storage_ == ParameterStorage::kFlatBuffer) {
      torch::Tensor value = values_.narrow(0, offsets_[i], n).view(p.sizes());
      if (p.data_ptr() != value.data_ptr()) {  // new or replaced since the last call
        value.copy_(p.detach());
        p.set_data(value);
      }
    } else if (!p.is_contiguous()) {  // replaced by a strided tensor since the constructor
      throw std::logic_error("FlatAdamW: a parameter updated in place is no longer contiguous");
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

void FlatAdamW::step(double lr) {
  adopt();
  torch::NoGradGuard no_grad;
  ++steps_;
  const double beta1 = settings_.beta1, beta2 = settings_.beta2;
  const double correction1 = 1.0 - std::pow(beta1, static_cast<double>(steps_));
  const double correction2 = 1.0 - std::pow(beta2, static_cast<double>(steps_));
  // One update of `values` (flat, contiguous) from the buffers' [offset, offset + n).
  auto update = [&](torch::Tensor values, int64_t offset) {
    const int64_t n = values.numel();
    if (values.is_cpu() && values.scalar_type() == torch::kFloat32) {
      const AdamWStep s{static_cast<float>(1.0 - lr * settings_.weight_decay),
                        static_cast<float>(1.0 - beta1),
                        static_cast<float>(beta2),
                        static_cast<float>(1.0 - beta2),
                        static_cast<float>(std::sqrt(correction2)),
                        static_cast<float>(settings_.eps),
                        static_cast<float>(-lr / correction1)};
      float* p = values.data_ptr<float>();
      const float* g = gradients_.data_ptr<float>() + offset;
      float* m = exp_avg_.data_ptr<float>() + offset;
      float* v = exp_avg_sq_.data_ptr<float>() + offset;
      at::parallel_for(0, n, 1 << 14,
                       [&](int64_t begin, int64_t end) { adamw_update_range(p, g, m, v, begin, end, s); });
      return;
    }
    torch::Tensor g = gradients_.narrow(0, offset, n), m = exp_avg_.narrow(0, offset, n),
                  v = exp_avg_sq_.narrow(0, offset, n);
    if (settings_.weight_decay != 0) values.mul_(1.0 - lr * settings_.weight_decay);
    m.lerp_(g, 1.0 - beta1);
    v.mul_(beta2).addcmul_(g, g, 1.0 - beta2);
    torch::Tensor denominator = (v.sqrt() / std::sqrt(correction2)).add_(settings_.eps);
    values.addcdiv_(m, denominator, -lr / correction1);
  };
  if (storage_ == ParameterStorage::kFlatBuffer) {
    update(values_, 0);
  } else {
    for (size_t i = 0; i < params_.size(); ++i) update(params_[i].detach().view({-1}), offsets_[i]);
  }
  // The parameters are views that autograd does not know of: tell the
  // caches that watch their version counters that they changed.
  for (auto& p : params_) p.unsafeGetTensorImpl()->bump_version();
}

void FlatAdamW::zero_grad() { gradients_.zero_(); }

}  // namespace rlwb::workers::model
