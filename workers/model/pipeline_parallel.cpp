#include "workers/model/pipeline_parallel.h"

#include <torch/autograd.h>
#include <torch/torch.h>

#include <stdexcept>

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

// The last hand-over: the last stage's output on every stage. What is
// computed from it is the same on every stage, so in backward the last
// stage keeps its own gradient; the other stages' inputs were never read.
struct BroadcastFromLastStage : torch::autograd::Function<BroadcastFromLastStage> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group, int64_t stage,
                               int64_t stages, std::vector<int64_t> shape) {
    const PipelineParallel pp{reinterpret_cast<SpmdGroup*>(group), static_cast<int>(stage),
                              static_cast<int>(stages)};
    ctx->saved_data["last"] = pp.last();
    ctx->saved_data["input_shape"] = x.sizes().vec();
    return broadcast_from(x, static_cast<int>(stages - 1), shape, pp, /*fresh=*/true);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor to_input =
        ctx->saved_data["last"].toBool()
            ? grads[0]
            : torch::zeros(ctx->saved_data["input_shape"].toIntVector(), grads[0].options());
    return {to_input, torch::Tensor(), torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// A hand-over between two stages: `from` sends its output to `from + 1`,
// which receives it in place of its own input; in backward the gradient
// goes the other way. The sender's own chain goes on with a copy of its
// output (whose gradient, arriving from the last hand-over, is zero for a
// stage that did not send it) and takes the receiver's gradient instead.
// The sends in both directions are left running (SpmdGroup::
// send_in_background), so a stage goes on with its next micro-batch while
// the hand-over waits for the receiver; the recvs wait. `tag` is the
// micro-batch's: a gradient can only meet the recv of its own micro-batch,
// whatever order each stage's backward runs the micro-batches in.
struct SendToNextStage : torch::autograd::Function<SendToNextStage> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group, int64_t to,
                               int64_t tag) {
    ctx->saved_data["group"] = group;
    ctx->saved_data["to"] = to;
    ctx->saved_data["tag"] = tag;
    torch::Tensor out = x.contiguous().clone();
    reinterpret_cast<SpmdGroup*>(group)->send_in_background(out, static_cast<int>(to), static_cast<int>(tag));
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor grad = torch::empty(grads[0].sizes(), grads[0].options());
    reinterpret_cast<SpmdGroup*>(ctx->saved_data["group"].toInt())
        ->recv(grad, static_cast<int>(ctx->saved_data["to"].toInt()),
               static_cast<int>(ctx->saved_data["tag"].toInt()));
    return {grad, torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

struct ReceiveFromPreviousStage : torch::autograd::Function<ReceiveFromPreviousStage> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t group, int64_t from,
                               std::vector<int64_t> shape, int64_t tag) {
    ctx->saved_data["group"] = group;
    ctx->saved_data["from"] = from;
    ctx->saved_data["tag"] = tag;
    ctx->saved_data["input_shape"] = x.sizes().vec();
    torch::Tensor out = torch::empty(shape, x.options().requires_grad(false));
    reinterpret_cast<SpmdGroup*>(group)->recv(out, static_cast<int>(from), static_cast<int>(tag));
    return out;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    reinterpret_cast<SpmdGroup*>(ctx->saved_data["group"].toInt())
        ->send_in_background(grads[0].contiguous(), static_cast<int>(ctx->saved_data["from"].toInt()),
                             static_cast<int>(ctx->saved_data["tag"].toInt()));
    // This stage's own input was replaced, never read: no gradient.
    return {torch::zeros(ctx->saved_data["input_shape"].toIntVector(), grads[0].options()), torch::Tensor(),
            torch::Tensor(), torch::Tensor(), torch::Tensor()};
  }
};

// Forward: the sum over the replica's p t ranks. Backward: the gradient of
// the sum is stage 0's (the others replaced the embedding by what they
// received), summed over the stages so every rank has it.
struct ReduceEmbeddingOverStages : torch::autograd::Function<ReduceEmbeddingOverStages> {
  static torch::Tensor forward(AutogradContext* ctx, const torch::Tensor& x, int64_t vocab_group,
                               int64_t stage_group) {
    ctx->saved_data["group"] = stage_group;
    torch::Tensor sum = x.contiguous().clone();
    reinterpret_cast<SpmdGroup*>(vocab_group)->all_reduce_sum(sum);
    return sum;
  }
  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    torch::Tensor grad = grads[0].contiguous().clone();
    reinterpret_cast<SpmdGroup*>(ctx->saved_data["group"].toInt())->all_reduce_sum(grad);
    return {grad, torch::Tensor(), torch::Tensor()};
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
                                const PipelineParallel& pp, bool replicated_after, int tag) {
  if (!pp.active()) return x;
  const bool autograd = torch::GradMode::is_enabled() && x.requires_grad();
  const auto group = reinterpret_cast<int64_t>(pp.group);
  if (replicated_after) {  // the last hand-over: to every stage
    if (from != pp.stages - 1)
      throw std::logic_error("pass_stage_output: only the last stage's output goes to every stage");
    if (!autograd) return broadcast_from(x, from, shape, pp, /*fresh=*/false);
    return BroadcastFromLastStage::apply(x, group, pp.stage, pp.stages, shape);
  }
  // Between two stages only; the others are not involved.
  if (pp.stage == from) {
    if (autograd) return SendToNextStage::apply(x, group, from + 1, tag);
    pp.group->send_in_background(x, from + 1, tag);  // x is not written after this
    return x;
  }
  if (pp.stage == from + 1) {
    if (autograd) return ReceiveFromPreviousStage::apply(x, group, from, shape, tag);
    torch::Tensor out = torch::empty(shape, x.options().requires_grad(false));
    pp.group->recv(out, from, tag);
    return out;
  }
  return x;
}

torch::Tensor reduce_embedding_over_stages(const torch::Tensor& x, const PipelineParallel& pp) {
  if (!pp.active())
    throw std::logic_error("reduce_embedding_over_stages: without stages there is no pp.vocab");
  if (!torch::GradMode::is_enabled() || !x.requires_grad()) {
    torch::Tensor sum = x.is_contiguous() ? x : x.contiguous();
    pp.vocab.group->all_reduce_sum(sum);
    return sum;
  }
  return ReduceEmbeddingOverStages::apply(x, reinterpret_cast<int64_t>(pp.vocab.group),
                                          reinterpret_cast<int64_t>(pp.group));
}

}  // namespace rlwb::workers::model
