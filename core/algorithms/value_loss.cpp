#include "core/algorithms/value_loss.h"

#include "core/algorithms/input_checks.h"
#include "core/algorithms/masked_ops.h"

namespace rlwb::core::algorithms {

Metrics ValueLoss::metrics() const {
  return {{"critic/vf_loss", loss.item<double>()}, {"critic/vf_clipfrac", clipfrac.item<double>()}};
}

ValueLoss value_loss(const torch::Tensor& values, const torch::Tensor& old_values,
                     const torch::Tensor& returns, const torch::Tensor& response_mask,
                     const ValueLossOptions& options) {
  constexpr const char* fn = "value_loss";
  detail::check_dim(fn, "values", values, 2);
  torch::Tensor m = detail::bool_mask(fn, response_mask, values, "values");
  detail::check_same_shape(fn, "old_values", old_values, "values", values);
  detail::check_same_shape(fn, "returns", returns, "values", values);
  if (options.clip_range_value && !(*options.clip_range_value >= 0)) {
    detail::fail(fn, "clip_range_value must be >= 0 (or unset to turn clipping off), got " +
                         std::to_string(*options.clip_range_value));
  }
  torch::Tensor v = detail::zero_padding(values, m);
  torch::Tensor v_old = detail::zero_padding(old_values, m).detach();
  torch::Tensor r = detail::zero_padding(returns, m).detach();

  torch::Tensor unclipped = (v - r).square();
  ValueLoss out;
  if (!options.clip_range_value) {
    out.loss = 0.5 * aggregate_loss(unclipped, m, options.aggregation);
    out.clipfrac = torch::zeros({}, v.options().requires_grad(false));
    return out;
  }
  double c = *options.clip_range_value;
  torch::Tensor v_clipped = torch::clamp(v, v_old - c, v_old + c);
  torch::Tensor clipped = (v_clipped - r).square();
  out.loss = 0.5 * aggregate_loss(torch::maximum(unclipped, clipped), m, options.aggregation);
  at::NoGradGuard no_grad;
  out.clipfrac = masked_mean((clipped > unclipped).to(v.scalar_type()), m).detach();
  return out;
}

torch::Tensor explained_variance(const torch::Tensor& returns, const torch::Tensor& values,
                                 const torch::Tensor& response_mask) {
  constexpr const char* fn = "explained_variance";
  torch::Tensor m = detail::bool_mask(fn, response_mask, returns, "returns");
  detail::check_same_shape(fn, "values", values, "returns", returns);
  at::NoGradGuard no_grad;
  torch::Tensor r = detail::zero_padding(returns, m).detach();
  torch::Tensor v = detail::zero_padding(values, m).detach().to(r.scalar_type());
  return 1.0 - masked_var(r - v, m) / (masked_var(r, m) + 1e-5);
}

}  // namespace rlwb::core::algorithms
