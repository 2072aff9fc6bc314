#include "workers/model/layers.h"

#include <ATen/Parallel.h>
#include <ATen/ops/scaled_dot_product_attention.h>
#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <optional>
#include <vector>

#include "workers/model/rms_norm_kernel.h"
#include "workers/model/rope_kernel.h"
#include "workers/model/short_attention.h"
#include "workers/model/swiglu_kernel.h"

namespace rlwb::workers::model {

namespace {

// Rows of `dim` values in [rows, dim] views of x's contiguous data.
int64_t rows_of(const torch::Tensor& x, int64_t dim) { return dim > 0 ? x.numel() / dim : 0; }

// Whether rms_norm_kernel.h takes the norm: CPU float32 rows and a weight
// of one value per column (rms_norm() checked the dtypes).
bool rms_norm_kernel_fits(const torch::Tensor& x, const torch::Tensor& weight) {
  return x.is_cpu() && weight.is_cpu() && weight.dim() == 1 && weight.size(0) == x.size(-1);
}

int64_t rms_norm_grain(int64_t dim) {
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(dim, 1));
}

// y = (x r) w with r = rsqrt(mean(x^2) + eps) per row, in one pass per row
// on CPU float32 (rms_norm_kernel.h); r per row into `roots` when defined.
torch::Tensor rms_norm_cpu(const torch::Tensor& x, const torch::Tensor& weight, double eps,
                           const torch::Tensor& roots) {
  torch::Tensor out = torch::empty_like(x);
  const int64_t dim = x.size(-1);
  const float *src = x.data_ptr<float>(), *scale = weight.data_ptr<float>();
  float* dst = out.data_ptr<float>();
  float* r = roots.defined() ? roots.data_ptr<float>() : nullptr;
  at::parallel_for(0, rows_of(x, dim), rms_norm_grain(dim), [&](int64_t begin, int64_t end) {
    rms_norm_forward_rows(src, scale, dim, static_cast<float>(eps), dst, r, begin, end);
  });
  return out;
}

// RMSNorm with its backward written out, one autograd node. On CPU each
// direction is one pass of rms_norm_kernel.h; elsewhere the closed form in
// ATen operators (about eight kernels, where autograd through ATen's
// rms_norm runs some fifteen and six graph nodes):
//   x^ = x * r, r = rsqrt(mean(x^2) + eps), y = x^ * w
//   dw = sum over rows of dy * x^
//   dx = r * (g - x^ * mean(g * x^)), g = dy * w
// It keeps x and r (one float per row), not x^.
struct RmsNormFunction : torch::autograd::Function<RmsNormFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& x,
                               const torch::Tensor& weight, double eps) {
    torch::Tensor y, r;
    const bool kernel = rms_norm_kernel_fits(x, weight);
    ctx->saved_data["kernel"] = kernel;  // the backward takes the same path
    if (kernel) {
      const torch::Tensor in = x.contiguous();
      std::vector<int64_t> row_shape = x.sizes().vec();
      row_shape.back() = 1;
      r = torch::empty(row_shape, x.options());
      y = rms_norm_cpu(in, weight.contiguous(), eps, r);
      ctx->save_for_backward({in, r, weight});
    } else {
      r = (x.square().mean(-1, /*keepdim=*/true) + eps).rsqrt();
      y = x * r * weight;
      ctx->save_for_backward({x, r, weight});
    }
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &x = saved[0], &r = saved[1], &weight = saved[2];
    if (!ctx->saved_data["kernel"].toBool()) {
      const torch::Tensor& dy = grads[0];
      torch::Tensor normed = x * r, g = dy * weight;
      torch::Tensor dx = r * (g - normed * (g * normed).mean(-1, /*keepdim=*/true));
      torch::Tensor dw = (dy * normed).reshape({-1, weight.size(0)}).sum(0);
      return {dx, dw, torch::Tensor()};
    }
    const torch::Tensor dy = grads[0].contiguous(), w = weight.contiguous();
    const int64_t dim = x.size(-1), rows = rows_of(x, dim);
    torch::Tensor dx = torch::empty_like(x);
    // The weight's gradient is a sum over rows: one partial sum per chunk
    // of rows (at most one chunk per thread), added up after.
    const int64_t chunks = std::clamp<int64_t>(rows / rms_norm_grain(dim), 1, at::get_num_threads());
    torch::Tensor partial = torch::zeros({chunks, dim}, x.options());
    const float *in = x.data_ptr<float>(), *scale = w.data_ptr<float>(), *roots = r.data_ptr<float>(),
                *d_out = dy.data_ptr<float>();
    float *d_in = dx.data_ptr<float>(), *dw = partial.data_ptr<float>();
    at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c)
        rms_norm_backward_rows(in, scale, roots, d_out, dim, d_in, dw + c * dim, rows * c / chunks,
                               rows * (c + 1) / chunks);
    });
    return {dx, chunks == 1 ? partial.squeeze(0) : partial.sum(0), torch::Tensor()};
  }
};

}  // namespace

torch::Tensor rms_norm(const torch::Tensor& x, const torch::Tensor& weight, double eps) {
  const int64_t dim = x.size(-1);
  if (x.scalar_type() == torch::kFloat32 && weight.scalar_type() == torch::kFloat32) {
    if (torch::GradMode::is_enabled() && (x.requires_grad() || weight.requires_grad()))
      return RmsNormFunction::apply(x, weight, eps);
    // Without autograd on CPU: one pass per row; generation runs every
    // norm of every decoded token on rows of one hidden vector each, where
    // ATen's six operators were mostly dispatch.
    if (rms_norm_kernel_fits(x, weight))
      return rms_norm_cpu(x.contiguous(), weight.contiguous(), eps, torch::Tensor());
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
