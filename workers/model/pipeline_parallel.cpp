#include "workers/model/pipeline_parallel.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include "workers/spmd_group.h"

namespace rlwb::workers::model {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// `fresh`: the sender returns a copy (an autograd function's output must
// not be its input); without autograd it returns x itself.
torch::Tensor broadcast_from(const torch::Tensor& x, int from, const std::vector<int64_t>& shape,
                             const PipelineParallel& pp, bool fresh) {
  torch::Tensor out = pp.stage != from ? torch::empty(shape, x.options().requires_grad(false))
                      : fresh          ? x.contiguous().clone()
                                       : x.contiguous();
  pp.group->broadcast(out, from);
  return out;
}

struct PassStageOutput : torch::autograd::Function<PassStageOutput> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group, int64_t stage,
                               int64_t stages, int64_t from, std::vector<int64_t> shape,
                               bool replicated_after) {
    const PipelineParallel pp{reinterpret_cast<SpmdGroup*>(group), static_cast<int>(stage),
                              static_cast<int>(stages)};
    ctx->saved_data["group"] = group;
    ctx->saved_data["stage"] = stage;
    ctx->saved_data["from"] = from;
    ctx->saved_data["replicated"] = replicated_after;
    ctx->saved_data["input_shape"] = x.sizes().vec();
    return broadcast_from(x, static_cast<int>(from), shape, pp, /*fresh=*/true);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    auto* group = reinterpret_cast<SpmdGroup*>(ctx->saved_data["group"].toInt());
    const int64_t stage = ctx->saved_data["stage"].toInt(), from = ctx->saved_data["from"].toInt();
    torch::Tensor grad = grads[0].contiguous().clone();
    if (!ctx->saved_data["replicated"].toBool()) group->all_reduce_sum(grad);
    // The input of a stage that did not send was never read: no gradient.
    torch::Tensor to_input =
        stage == from ? grad : torch::zeros(ctx->saved_data["input_shape"].toIntVector(), grad.options());
    return {to_input,        torch::Tensor(), torch::Tensor(), torch::Tensor(),
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

}  // namespace

Shard layers_of_stage(int64_t layers, int stage, int stages) { return shard_of(layers, stage, stages); }

int stage_of_layer(int64_t layer, int64_t layers, int stages) {
  int stage = 0;
  while (stage + 1 < stages) {
    const Shard run = layers_of_stage(layers, stage, stages);
    if (layer < run.start + run.size) break;
    ++stage;
  }
  return stage;
}

int64_t layer_of_parameter(const std::string& name) {
  const std::string prefix = "layers.";
  if (name.rfind(prefix, 0) != 0) return -1;
  return std::stoll(name.substr(prefix.size(), name.find('.', prefix.size()) - prefix.size()));
}

torch::Tensor pass_stage_output(const torch::Tensor& x, int from, const std::vector<int64_t>& shape,
                                const PipelineParallel& pp, bool replicated_after) {
  if (!pp.active()) return x;
  if (!torch::GradMode::is_enabled() || !x.requires_grad())
    return broadcast_from(x, from, shape, pp, /*fresh=*/false);
  return PassStageOutput::apply(x, reinterpret_cast<int64_t>(pp.group), pp.stage, pp.stages, from, shape,
                                replicated_after);
}

}  // namespace rlwb::workers::model
