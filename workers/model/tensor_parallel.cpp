#include "workers/model/tensor_parallel.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <algorithm>

#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// The group travels through autograd as an integer (saved_data holds IValues).
int64_t as_handle(SpmdGroup* group) { return reinterpret_cast<int64_t>(group); }
SpmdGroup& from_handle(AutogradContext* ctx) {
  return *reinterpret_cast<SpmdGroup*>(ctx->saved_data["group"].toInt());
}

struct CopyToTensorParallel : torch::autograd::Function<CopyToTensorParallel> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group) {
    ctx->saved_data["group"] = group;
    return x.view_as(x);
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor grad = grads[0].contiguous().clone();
    from_handle(ctx).all_reduce_sum(grad);
    return {grad, torch::Tensor()};
  }
};

struct ReduceFromTensorParallel : torch::autograd::Function<ReduceFromTensorParallel> {
  static torch::Tensor forward(AutogradContext*, const torch::Tensor& x, int64_t group) {
    torch::Tensor sum = x.contiguous().clone();
    reinterpret_cast<SpmdGroup*>(group)->all_reduce_sum(sum);
    return sum;
  }
  static variable_list backward(AutogradContext*, variable_list grads) { return {grads[0], torch::Tensor()}; }
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

Shard shard_of(int64_t total, int rank, int parts) {
  const int64_t base = total / parts, extra = total % parts;
  return {rank * base + std::min<int64_t>(rank, extra), base + (rank < extra ? 1 : 0)};
}

torch::Tensor copy_to_tensor_parallel(const torch::Tensor& x, const TensorParallel& tp) {
  if (!tp.active() || !torch::GradMode::is_enabled()) return x;
  return CopyToTensorParallel::apply(x, as_handle(tp.group));
}

torch::Tensor reduce_from_tensor_parallel(const torch::Tensor& x, const TensorParallel& tp) {
  if (!tp.active()) return x;
  if (!torch::GradMode::is_enabled()) {
    torch::Tensor sum = x.is_contiguous() ? x : x.contiguous();
    tp.group->all_reduce_sum(sum);
    return sum;
  }
  return ReduceFromTensorParallel::apply(x, as_handle(tp.group));
}

torch::Tensor gather_shards(const torch::Tensor& local, int64_t dim, int64_t total,
                            const TensorParallel& tp) {
  if (!tp.active()) return local;
  const int64_t widest = shard_of(total, 0, tp.size).size;
  torch::Tensor padded = local.detach();
  if (padded.size(dim) < widest) {
    std::vector<int64_t> shape = padded.sizes().vec();
    shape[dim] = widest - padded.size(dim);
    padded = torch::cat({padded, torch::zeros(shape, padded.options())}, dim);
  }
  std::vector<torch::Tensor> parts = tp.group->all_gather(padded.contiguous());
  for (int r = 0; r < tp.size; ++r) parts[r] = parts[r].narrow(dim, 0, shard_of(total, r, tp.size).size);
  return torch::cat(parts, dim);
}

int64_t tensor_parallel_dim(const std::string& name) {
  for (const char* column : {".wq.weight", ".wq.bias", ".wk.weight", ".wk.bias", ".wv.weight", ".wv.bias",
                             ".ffn_gate.weight", ".ffn_gate.bias", ".ffn_up.weight", ".ffn_up.bias"})
    if (ends_with(name, column)) return 0;
  if (ends_with(name, ".wo.weight") || ends_with(name, ".ffn_down.weight")) return 1;
  if (is_vocab_parameter(name)) return 0;
  return -1;
}

bool is_vocab_parameter(const std::string& name) {
  return name == "tok_embeddings.weight" || name == "lm_head.weight";
}

}  // namespace rlwb::workers::model
