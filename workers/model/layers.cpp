#include "workers/model/layers.h"

#include <ATen/Parallel.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>

#include "workers/model/rope_kernel.h"
#include "workers/model/short_attention.h"
#include "workers/model/swiglu_kernel.h"

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

namespace {

// The row stride of t [..., F] seen as rows of F contiguous floats, when
// every row is that far from the one before (a projection's output, or
// one half of the packed [gate, up] product); nullopt otherwise.
std::optional<int64_t> row_stride(const torch::Tensor& t) {
  if (!t.is_cpu() || t.scalar_type() != torch::kFloat32 || t.dim() < 1 || t.stride(-1) != 1)
    return std::nullopt;
  if (t.dim() == 1) return t.size(0);
  int64_t stride = t.stride(-2), reach = t.stride(-2) * t.size(-2);
  for (int64_t d = t.dim() - 3; d >= 0; --d) {
    if (t.size(d) != 1 && t.stride(d) != reach) return std::nullopt;
    reach *= t.size(d);
  }
  return stride;
}

int64_t swiglu_grain(int64_t columns) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(columns, 1));
}

torch::Tensor swiglu_forward(const torch::Tensor& gate, const torch::Tensor& up, int64_t gate_stride,
                             int64_t up_stride) {
  const int64_t columns = gate.size(-1), rows = columns > 0 ? gate.numel() / columns : 0;
  torch::Tensor out = torch::empty(gate.sizes(), gate.options());
  const SwigluRows layout{columns, gate_stride, up_stride, columns};
  const float *g = gate.data_ptr<float>(), *u = up.data_ptr<float>();
  float* y = out.data_ptr<float>();
  at::parallel_for(0, rows, swiglu_grain(columns),
                   [&](int64_t begin, int64_t end) { swiglu_forward_rows(g, u, y, layout, begin, end); });
  return out;
}

// silu(gate) * up with its backward written out (swiglu_kernel.h): one
// node, one pass each way.
struct SwigluFunction : torch::autograd::Function<SwigluFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& gate,
                               const torch::Tensor& up) {
    ctx->save_for_backward({gate, up});
    return swiglu_forward(gate, up, *row_stride(gate), *row_stride(up));
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &gate = saved[0], &up = saved[1];
    torch::Tensor dy = grads[0];
    std::optional<int64_t> dy_stride = row_stride(dy);
    if (!dy_stride) dy = dy.contiguous(), dy_stride = row_stride(dy);
    const int64_t columns = gate.size(-1), rows = columns > 0 ? gate.numel() / columns : 0;
    torch::Tensor d_gate = torch::empty(gate.sizes(), gate.options());
    torch::Tensor d_up = torch::empty(gate.sizes(), gate.options());
    const SwigluRows layout{columns, *row_stride(gate), *row_stride(up), columns};
    const float *g = gate.data_ptr<float>(), *u = up.data_ptr<float>(), *d = dy.data_ptr<float>();
    float *dg = d_gate.data_ptr<float>(), *du = d_up.data_ptr<float>();
    at::parallel_for(0, rows, swiglu_grain(columns), [&](int64_t begin, int64_t end) {
      swiglu_backward_rows(g, u, d, *dy_stride, dg, du, layout, begin, end);
    });
    return {d_gate, d_up};
  }
};

}  // namespace

torch::Tensor swiglu(const torch::Tensor& gate, const torch::Tensor& up) {
  const std::optional<int64_t> gate_stride = row_stride(gate), up_stride = row_stride(up);
  if (gate_stride && up_stride && gate.sizes() == up.sizes()) {
    if (torch::GradMode::is_enabled() && (gate.requires_grad() || up.requires_grad()))
      return SwigluFunction::apply(gate, up);
    return swiglu_forward(gate, up, *gate_stride, *up_stride);
  }
  return torch::silu(gate) * up;
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

namespace {

// The layout rope_rows (rope_kernel.h) reads, when the tensors fit it: CPU
// float32, x [B, H, T, D] and tables [B or 1, 1, T, D], D even and each
// last dimension contiguous. nullopt for anything else.
std::optional<RopeRows> rope_layout(const torch::Tensor& x, const torch::Tensor& cos,
                                    const torch::Tensor& sin) {
  auto fits = [](const torch::Tensor& t) {
    return t.is_cpu() && t.scalar_type() == torch::kFloat32 && t.dim() == 4 && t.stride(3) == 1;
  };
  if (!fits(x) || !fits(cos) || !fits(sin) || x.size(3) % 2 != 0) return std::nullopt;
  const int64_t batch = x.size(0), positions = x.size(2), dim = x.size(3);
  for (const torch::Tensor* table : {&cos, &sin})
    if ((table->size(0) != batch && table->size(0) != 1) || table->size(1) != 1 ||
        table->size(2) != positions || table->size(3) != dim)
      return std::nullopt;
  auto batch_stride = [&](const torch::Tensor& t) { return t.size(0) == 1 ? 0 : t.stride(0); };
  return RopeRows{
      x.size(1), positions,         dim,           x.stride(0),       x.stride(1),  x.stride(2), 0, 0,
      0,         batch_stride(cos), cos.stride(2), batch_stride(sin), sin.stride(2)};
}

// rope_rows over every row of x into a new tensor laid out as x (or
// contiguous when x has gaps), split over torch's intra-op threads.
torch::Tensor rope_pass(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin,
                        RopeRows rows, bool backward) {
  torch::Tensor out = torch::empty_like(x);
  if (out.stride(3) != 1) out = torch::empty(x.sizes(), x.options());
  rows.out_batch = out.stride(0), rows.out_head = out.stride(1), rows.out_position = out.stride(2);
  const float *in = x.data_ptr<float>(), *c = cos.data_ptr<float>(), *s = sin.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  const int64_t total = x.size(0) * rows.heads * rows.positions;
  at::parallel_for(0, total, std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(rows.dim, 1)),
                   [&](int64_t begin, int64_t end) { rope_rows(in, c, s, dst, rows, begin, end, backward); });
  return out;
}

// RoPE with its backward written out (rope_kernel.h): one node whose
// forward and backward are one pass each, where autograd would run roll,
// mul and addcmul and differentiate each.
struct RopeFunction : torch::autograd::Function<RopeFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& cos, const torch::Tensor& sin) {
    ctx->save_for_backward({cos, sin});
    return rope_pass(x, cos, sin, *rope_layout(x, cos, sin), /*backward=*/false);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    torch::Tensor dy = grads[0].stride(3) == 1 ? grads[0] : grads[0].contiguous();
    std::optional<RopeRows> rows = rope_layout(dy, saved[0], saved[1]);
    if (!rows) dy = dy.contiguous(), rows = rope_layout(dy, saved[0], saved[1]);
    return {rope_pass(dy, saved[0], saved[1], *rows, /*backward=*/true), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor apply_rope(const torch::Tensor& x, const torch::Tensor& cos, const torch::Tensor& sin) {
  const bool tables_learn = cos.requires_grad() || sin.requires_grad();
  if (const std::optional<RopeRows> rows = tables_learn ? std::nullopt : rope_layout(x, cos, sin)) {
    if (torch::GradMode::is_enabled() && x.requires_grad()) return RopeFunction::apply(x, cos, sin);
    return rope_pass(x, cos, sin, *rows, /*backward=*/false);
  }
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
  if (std::optional<torch::Tensor> out = short_row_attention(q, k, v, mask, causal)) return *out;
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
