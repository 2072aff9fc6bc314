// Pipeline parallelism over the c10d group of a model's pipeline stages
// (workers/spmd_group.h, core::Mesh's pp axis): the blocks are split into
// `stages` contiguous runs, stage s holding layers_of_stage(s) only.
//
// A forward pass is collective over the stages. Every stage embeds the
// tokens (a lookup, cheap) and then, for s = 0 .. stages-1, stage s runs
// its blocks and pass_stage_output() hands the result to every stage; the
// last hand-over gives every stage the final hidden states, so the norm,
// the head and everything after it (log-probs, the loss, sampling) are
// replicated over the stages as they are over tensor-parallel ranks. That
// keeps the roles' code the same at any pp and lets each stage's autograd
// graph reach its blocks through the hand-overs:
//
//   forward  stage s's output broadcast from s
//   backward the gradients summed over the stages to s (only the stage
//            that used the output -- s + 1 -- has a non-zero one); the
//            last hand-over instead keeps its own gradient on the last
//            stage, because the loss behind it is the same on every stage
//
// Parameters outside the blocks (embedding, final norm, heads) are held
// by every stage. The head's gradients are the same on every stage; the
// embedding lookup's gradient is only stage 0's, so after backward the
// trainer broadcasts the embedding's gradient from stage 0
// (TrainState::step). Micro-batches run one after another through all
// stages, forward then backward: GPipe's schedule with one micro-batch in
// flight, chosen because it needs no second copy of the activations and
// gives gradients identical to one process; the stages wait on each other
// (the bubble is (stages - 1) / stages of a pass), which a 1F1B schedule
// over several micro-batches would shrink.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

#include "workers/model/tensor_parallel.h"

namespace rlwb::workers {
class SpmdGroup;
}

namespace rlwb::workers::model {

// Where this rank sits among the pipeline stages of its model.
struct PipelineParallel {
  SpmdGroup* group = nullptr;  // the stages; null with one stage. Outlives the model.
  int stage = 0, stages = 1;
  bool active() const { return stages > 1; }
  bool last() const { return stage == stages - 1; }
};

// The layers [start, start + size) of `stage`: the first layers % stages
// stages get one more.
Shard layers_of_stage(int64_t layers, int stage, int stages);

// The stage that holds block `layer` of `layers`.
int stage_of_layer(int64_t layer, int64_t layers, int stages);

// The block a parameter of the Transformer belongs to (RLWB's names:
// "layers.3.wq.weight" -> 3), or -1 for the embedding, the final norm and
// the heads, which every stage holds.
int64_t layer_of_parameter(const std::string& name);

// Stage `from`'s `x` on every stage (see above). `shape` is the shape of
// what `from` sends: the other stages allocate it. `replicated_after`:
// everything computed from the result is the same on every stage (the
// final hand-over), so the gradient stays where it is instead of being
// summed. Without autograd a plain broadcast.
torch::Tensor pass_stage_output(const torch::Tensor& x, int from, const std::vector<int64_t>& shape,
                                const PipelineParallel& pp, bool replicated_after);

}  // namespace rlwb::workers::model
