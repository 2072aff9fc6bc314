#include "core/algorithms/masked_ops.h"

#include "core/algorithms/input_checks.h"

namespace rlwb::core::algorithms {
namespace {

torch::Tensor reduce_sum(const torch::Tensor& x, std::optional<int64_t> dim) {
  return dim ? x.sum(*dim) : x.sum();
}

}  // namespace

torch::Tensor masked_sum(const torch::Tensor& values, const torch::Tensor& mask, std::optional<int64_t> dim) {
  torch::Tensor m = detail::bool_mask("masked_sum", mask, values, "values");
  return reduce_sum(detail::zero_padding(values, m), dim);
}

torch::Tensor masked_mean(const torch::Tensor& values, const torch::Tensor& mask,
                          std::optional<int64_t> dim) {
  torch::Tensor m = detail::bool_mask("masked_mean", mask, values, "values");
  torch::Tensor x = detail::zero_padding(values, m);
  torch::Tensor n = reduce_sum(m.to(x.scalar_type()), dim);
  return reduce_sum(x, dim) / n.clamp_min(1);
}

torch::Tensor masked_var(const torch::Tensor& values, const torch::Tensor& mask, std::optional<int64_t> dim,
                         bool unbiased) {
  torch::Tensor m = detail::bool_mask("masked_var", mask, values, "values");
  torch::Tensor x = detail::zero_padding(values, m);
  torch::Tensor n = reduce_sum(m.to(x.scalar_type()), dim);
  torch::Tensor mean = reduce_sum(x, dim) / n.clamp_min(1);
  if (dim) mean = mean.unsqueeze(*dim);
  torch::Tensor dev = torch::where(m, x - mean, torch::zeros({}, x.options()));
  torch::Tensor squares = reduce_sum(dev * dev, dim);
  torch::Tensor dof = unbiased ? n - 1 : n;
  return torch::where(dof > 0, squares / dof.clamp_min(1), torch::zeros({}, x.options()));
}

torch::Tensor masked_whiten(const torch::Tensor& values, const torch::Tensor& mask, bool shift_mean,
                            double eps) {
  torch::Tensor m = detail::bool_mask("masked_whiten", mask, values, "values");
  torch::Tensor x = detail::zero_padding(values, m);
  torch::Tensor mean = masked_mean(x, m);
  torch::Tensor var = masked_var(x, m);
  torch::Tensor white = (x - mean) * torch::rsqrt(var + eps);
  if (!shift_mean) white = white + mean;
  return torch::where(m, white, torch::zeros({}, x.options()));
}

torch::Tensor last_valid_index(const torch::Tensor& response_mask) {
  detail::check_dim("last_valid_index", "response_mask", response_mask, 2);
  torch::Tensor m = detail::bool_mask("last_valid_index", response_mask, response_mask, "mask");
  torch::Tensor positions =
      torch::arange(m.size(1), torch::TensorOptions().dtype(torch::kInt64).device(m.device())).expand_as(m);
  torch::Tensor none = torch::full({}, -1, positions.options());
  if (m.size(1) == 0) return torch::full({m.size(0)}, -1, positions.options());
  return torch::where(m, positions, none).amax(1);
}

torch::Tensor place_score_at_last_token(const torch::Tensor& scores, const torch::Tensor& response_mask) {
  constexpr const char* fn = "place_score_at_last_token";
  detail::check_dim(fn, "response_mask", response_mask, 2);
  detail::check_rows(fn, "scores", scores, response_mask.size(0));
  torch::Tensor last = last_valid_index(response_mask);
  torch::Tensor positions = torch::arange(response_mask.size(1), last.options());
  torch::Tensor at_last = positions.unsqueeze(0) == last.unsqueeze(1);
  torch::Tensor s = detail::floating(scores);
  return torch::where(at_last, s.unsqueeze(1), torch::zeros({}, s.options()));
}

}  // namespace rlwb::core::algorithms
