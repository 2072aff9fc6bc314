#include "workers/model/short_attention.h"

#include <ATen/Parallel.h>
#include <torch/autograd.h>

#include <cmath>

namespace rlwb::workers::model {

namespace {

HeadRows head_rows(const torch::Tensor& t) { return {t.stride(0), t.stride(1), t.stride(2)}; }

bool float_rows(const torch::Tensor& t) {
  return t.defined() && t.dim() == 4 && t.device().is_cpu() && t.scalar_type() == torch::kFloat32 &&
         t.stride(3) == 1;
}

// The kernel's layout of a call, or nullopt where it does not take it.
// `mask_view` receives the mask broadcast to [B, H, T, S] (it must outlive
// the kernel's run).
std::optional<AttentionLayout> kernel_layout(const torch::Tensor& q, const torch::Tensor& k,
                                             const torch::Tensor& v, const torch::Tensor& mask, bool causal,
                                             torch::Tensor* mask_view) {
  if (!float_rows(q) || !float_rows(k) || !float_rows(v)) return std::nullopt;
  const int64_t batch = q.size(0), heads = q.size(1), queries = q.size(2), dim = q.size(3);
  const int64_t kv_heads = k.size(1), keys = k.size(2);
  if (keys > kShortAttentionMaxKeys || keys == 0 || queries == 0 || kv_heads == 0 || heads % kv_heads != 0 ||
      k.size(0) != batch || k.size(3) != dim || v.sizes() != k.sizes())
    return std::nullopt;
  AttentionLayout l{.batch = batch,
                    .heads = heads,
                    .kv_heads = kv_heads,
                    .queries = queries,
                    .keys = keys,
                    .dim = dim,
                    .q = head_rows(q),
                    .k = head_rows(k),
                    .v = head_rows(v),
                    .out = {}};
  l.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(dim)));
  if (mask.defined()) {
    if (mask.scalar_type() != torch::kBool || mask.dim() > 4 || !mask.device().is_cpu()) return std::nullopt;
    *mask_view = mask.expand({batch, heads, queries, keys});
    l.mask = mask_view->data_ptr<bool>();
    l.mask_batch = mask_view->stride(0), l.mask_head = mask_view->stride(1);
    l.mask_query = mask_view->stride(2), l.mask_key = mask_view->stride(3);
  } else if (causal) {
    if (queries != keys) return std::nullopt;  // SDPA aligns them top-left; the kernel does not
    l.causal = true;
  }
  return l;
}

// [B, H, T, D] laid out as [B, T, H, D]: what attention's caller
// transposes and flattens next, which is then a view.
torch::Tensor empty_rows_like(const torch::Tensor& t) {
  return torch::empty({t.size(0), t.size(2), t.size(1), t.size(3)}, t.options()).transpose(1, 2);
}

int64_t grain_of(const AttentionLayout& l) {
  const int64_t work = (l.heads / l.kv_heads) * l.queries * l.keys * l.dim;
  return std::max<int64_t>(1, at::internal::GRAIN_SIZE / std::max<int64_t>(work, 1));
}

torch::Tensor run_forward(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                          AttentionLayout l, torch::Tensor* probs) {
  torch::Tensor out = empty_rows_like(q);
  l.out = head_rows(out);
  float* p = nullptr;
  if (probs != nullptr) {
    *probs = torch::empty({l.batch, l.heads, l.queries, l.keys}, q.options());
    p = probs->data_ptr<float>();
  }
  const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>();
  float* op = out.data_ptr<float>();
  at::parallel_for(0, l.batch * l.kv_heads, grain_of(l), [&](int64_t begin, int64_t end) {
    attention_forward_units(qp, kp, vp, op, p, l, begin, end);
  });
  return out;
}

// The mask, wrapped so that autograd's apply does not take it for an input
// (it has no gradient, and may be undefined, which apply refuses).
struct MaskArgument {
  torch::Tensor mask;
};

struct ShortAttentionFunction : torch::autograd::Function<ShortAttentionFunction> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, const torch::Tensor& q,
                               const torch::Tensor& k, const torch::Tensor& v, const MaskArgument& mask,
                               bool causal) {
    torch::Tensor mask_view, probs;
    const AttentionLayout l = *kernel_layout(q, k, v, mask.mask, causal, &mask_view);
    torch::Tensor out = run_forward(q, k, v, l, &probs);
    ctx->save_for_backward({q, k, v, probs});
    return out;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const auto saved = ctx->get_saved_variables();
    const torch::Tensor &q = saved[0], &k = saved[1], &v = saved[2], &probs = saved[3];
    torch::Tensor d_out = grads[0].stride(3) == 1 ? grads[0] : grads[0].contiguous();
    torch::Tensor unused;
    // The mask is in probs (0 where masked): the backward needs no mask.
    AttentionLayout l = *kernel_layout(q, k, v, torch::Tensor(), /*causal=*/false, &unused);
    torch::Tensor dq = empty_rows_like(q), dk = empty_rows_like(k), dv = empty_rows_like(v);
    const AttentionGradients g{.d_out = d_out.data_ptr<float>(),
                               .dq = dq.data_ptr<float>(),
                               .dk = dk.data_ptr<float>(),
                               .dv = dv.data_ptr<float>(),
                               .d_out_rows = head_rows(d_out),
                               .dq_rows = head_rows(dq),
                               .dk_rows = head_rows(dk),
                               .dv_rows = head_rows(dv)};
    const float *qp = q.data_ptr<float>(), *kp = k.data_ptr<float>(), *vp = v.data_ptr<float>(),
                *pp = probs.data_ptr<float>();
    at::parallel_for(0, l.batch * l.kv_heads, grain_of(l), [&](int64_t begin, int64_t end) {
      attention_backward_units(qp, kp, vp, pp, g, l, begin, end);
    });
    return {dq, dk, dv, torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

std::optional<torch::Tensor> short_row_attention(const torch::Tensor& q, const torch::Tensor& k,
                                                 const torch::Tensor& v, const torch::Tensor& mask,
                                                 bool causal) {
  torch::Tensor mask_view;
  const std::optional<AttentionLayout> l = kernel_layout(q, k, v, mask, causal, &mask_view);
  if (!l) return std::nullopt;
  const bool learns = q.requires_grad() || k.requires_grad() || v.requires_grad();
  if (torch::GradMode::is_enabled() && learns)
    return ShortAttentionFunction::apply(q, k, v, MaskArgument{mask}, causal);
  return run_forward(q, k, v, *l, nullptr);
}

}  // namespace rlwb::workers::model
