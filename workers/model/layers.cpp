#include "workers/model/layers.h"

#include <ATen/Parallel.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace rlwb::workers::model {

namespace {

// RMSNorm with its backward written out. ATen's CPU rms_norm is a
// composition of six ops, and autograd differentiates each one on its own
// (about 15 kernels and six graph nodes per norm); the closed form below
// is one node and eight kernels:
//   x^ = x * r, r = rsqrt(mean(x^2) + eps), y = x^ * w
//   dw = sum over rows of dy * x^
//   dx = r * (g - x^ * mean(g * x^)), g = dy * w
struct RmsNormFunction : torch::autograd::Function<RmsNormFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, double eps) {
    torch::Tensor r = (x.square().mean(-1, /*keepdim=*/true) + eps).rsqrt();
    torch::Tensor normed = x * r;
    ctx->save_for_backward({normed, r, weight});
    return normed * weight;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &normed = saved[0], &r = saved[1], &weight = saved[2];
    const torch::Tensor& dy = grads[0];
    torch::Tensor g = dy * weight;
    torch::Tensor dx = r * (g - normed * (g * normed).mean(-1, /*keepdim=*/true));
    torch::Tensor dw = (dy * normed).reshape({-1, weight.size(0)}).sum(0);
    return {dx, dw, torch::Tensor()};
  }
};

// RMSNorm without autograd on CPU float32, in one pass per row. ATen's
// CPU rms_norm runs its six operators (pow, sum, div_, add, rsqrt, two
// mul) one after another, each a dispatch and a pass over the tensor; in
// generation that is every norm of every decoded token, on rows of one
// hidden vector each. The profiler's op-many-small-ops rule found
// generation dominated by such operators (grpo_code: about 1,700 per
// generate call); here a norm is one allocation and one loop. The same
// arithmetic as RmsNormFunction: r = rsqrt(mean(x^2) + eps), y = (x r) w.
torch::Tensor rms_norm_rows(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const torch::Tensor in = x.contiguous(), w = weight.contiguous();
  torch::Tensor out = torch::empty_like(in);
  const int64_t dim = in.size(-1), rows = dim > 0 ? in.numel() / dim : 0;
  const float* src = in.data_ptr<float>();
  const float* scale = w.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const float epsilon = static_cast<float>(eps), inverse_dim = 1.0f / static_cast<float>(dim);
  at::parallel_for(0, rows, std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(dim, 1)),
                   [&](int64_t begin, int64_t end) {
                     for (int64_t r = begin; r < end; ++r) {
                       const float* row = src + r * dim;
                       float* y = dst + r * dim;
                       float squares = 0;
                       for (int64_t i = 0; i < dim; ++i) squares += row[i] * row[i];
                       const float root = 1.0f / std::sqrt(squares * inverse_dim + epsilon);
                       for (int64_t i = 0; i < dim; ++i) y[i] = (row[i] * root) * scale[i];
                     }
                   });
  return out;
}

}  // namespace

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t dim = x.size(-1);
  if (x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32) {
    if (torch::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()))
      return RmsNormFunction::apply(x, weight, eps);
    if (x.is_cpu() && weight.is_cpu() && weight.dim() == 1 && weight.size(0) == dim)
      return rms_norm_rows(x, weight, eps);
    return at::rms_norm(x, {dim}, weight, eps);
  }
  torch::Tensor normed = at::rms_norm(x.to(torch::kFloat32), {dim}, std::nullopt, eps);
  return weight * normed.to(x.scalar_type());
}

torch::Tensor rope_inverse_frequencies(const TransformerConfig& config) {
  const int64_t dim = config.resolved_head_dim();
  // inv_freq[i] = 1 / theta^(2i / D)
  torch::Tensor exponents =
      torch::arange(0, dim, 2, torch::kInt64).to(torch::kFloat32) / static_cast<double>(dim);
  torch::Tensor inv_freq = 1.0 / torch::pow(config.rope_theta, exponents);
  const RopeScaling& s = config.rope_scaling;
  if (s.type == "linear") {
    inv_freq = inv_freq / s.factor;
  } else if (s.type == "llama3") {
    // Long wavelengths are slowed down by `factor`, short ones kept, and the
    // band between blends the two (Llama 3.1's frequency-dependent scaling).
    const double low_freq_wavelen = s.original_max_position_embeddings / s.low_freq_factor;
    const double high_freq_wavelen = s.original_max_position_embeddings / s.high_freq_factor;
    torch::Tensor wavelen = 2 * std::numbers::pi / inv_freq;
    torch::Tensor scaled = torch::where(wavelen > low_freq_wavelen, inv_freq / s.factor, inv_freq);
    torch::Tensor smooth = (s.original_max_position_embeddings / wavelen - s.low_freq_factor) /
                           (s.high_freq_factor - s.low_freq_factor);
    torch::Tensor blended = (1 - smooth) * scaled / s.factor + smooth * scaled;
    torch::Tensor medium = (wavelen >= high_freq_wavelen).logical_and(wavelen <= low_freq_wavelen);
    inv_freq = torch::where(medium, blended, scaled);
  }
  return inv_freq;
}

RopeTables rope_tables(const TransformerConfig& config, int64_t positions) {
  torch::Tensor inv_freq = rope_inverse_frequencies(config);
  torch::Tensor p = torch::arange(positions, torch::kInt64).to(torch::kFloat32);
  torch::Tensor angles = torch::outer(p, inv_freq);              // [positions, D/2]
  torch::Tensor emb = torch::cat({angles, angles}, /*dim=*/-1);  // [positions, D]
  torch::Tensor sign = torch::cat({-torch::ones_like(inv_freq), torch::ones_like(inv_freq)});
  return {emb.cos(), emb.sin() * sign};
}

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  torch::Tensor swapped = x.roll(x.size(-1) / 2, -1);  // [x2, x1]
  return torch::addcmul(x * cos, swapped, sin);        // x cos + [-x2, x1] sin
}

torch::Tensor causal_padding_mask(const torch::Tensor& key_mask, int64_t queries) {
  const int64_t keys = key_mask.size(1);
  auto opts = torch::TensorOptions().dtype(torch::kInt64).device(key_mask.device());
  torch::Tensor query_pos = torch::arange(keys - queries, keys, opts).view({queries, 1});  // [T, 1]
  torch::Tensor key_pos = torch::arange(keys, opts).view({1, keys});                       // [1, S]
  torch::Tensor causal = key_pos <= query_pos;                                             // [T, S]
  torch::Tensor self = key_pos == query_pos;
  torch::Tensor real_key = key_mask.to(torch::kBool).view({key_mask.size(0), 1, 1, keys});  // [B, 1, 1, S]
  return causal.logical_and(real_key).logical_or(self);                                     // [B, 1, T, S]
}

torch::Tensor grouped_query_attention(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& mask, bool causal) {
  const bool grouped = q.size(1) != k.size(1);
  const int64_t keys = k.size(2);
  if (q.device().is_cpu() && keys < kMinCpuAttentionKeys) {
    // ATen's CPU softmax and flash-attention kernels are about 10x slower
    // per element on rows shorter than one 16-float vector (torch 2.15):
    // pad the keys with zeros that the mask hides. exp(-inf) = 0, so the
    // result is the same.
    const int64_t queries = q.size(2), pad = kMinCpuAttentionKeys - keys;
    torch::Tensor attend = mask;
    if (!attend.defined()) {
      auto opts = torch::TensorOptions().dtype(torch::kInt64).device(q.device());
      torch::Tensor query_pos = torch::arange(keys - queries, keys, opts).view({queries, 1});
      torch::Tensor key_pos = torch::arange(keys, opts).view({1, keys});
      attend =
          causal ? key_pos <= query_pos : torch::ones({queries, keys}, opts.dtype(torch::kBool));  // [T, S]
    }
    namespace F = torch::nn::functional;
    return at::scaled_dot_product_attention(
        q, F::pad(k, F::PadFuncOptions({0, 0, 0, pad})), F::pad(v, F::PadFuncOptions({0, 0, 0, pad})),
        at::constant_pad_nd(attend, {0, pad}, 0), /*dropout_p=*/0.0,
        /*is_causal=*/false, /*scale=*/std::nullopt, /*enable_gqa=*/grouped);
  }
  std::optional<torch::Tensor> attn_mask;
  if (mask.defined()) attn_mask = mask;
  return at::scaled_dot_product_attention(q, k, v, attn_mask, /*dropout_p=*/0.0, causal && !mask.defined(),
                                          /*scale=*/std::nullopt, /*enable_gqa=*/grouped);
}

torch::Tensor position_ids_from_mask(const torch::Tensor& mask) {
  return (mask.to(torch::kInt64).cumsum(-1) - 1).clamp_min(0);
}

}  // namespace rlwb::workers::model
