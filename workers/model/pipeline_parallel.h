// Pipeline parallelism over the c10d group of a model's pipeline stages
// (workers/spmd_group.h, core::Mesh's pp axis): the blocks are split into
// `stages` contiguous runs, stage s holding layers_of_stage(s) only.
//
// The embedding and the language-model head are split by token id over
// all p * t ranks of the replica (`PipelineParallel::vocab`), as they are
// over the tp ranks without stages: every rank holds V/(p t) rows of
// each, so a stage's parameters are its blocks' share and its share of
// the vocabulary -- M/(p t) when the stages are alike (HybridFlow's table
// 2 assumes it; a head held whole by a stage would be most of a small
// model's stage).
//
// A forward pass is collective over the stages. Every rank looks up the
// tokens its rows hold and the sum over the p t ranks is the embedding
// (reduce_embedding_over_stages); then, for s = 0 .. stages-1, stage s
// runs its blocks and pass_stage_output() hands the result on: to stage
// s + 1 alone (point to point), and from the last stage to every stage,
// so that every stage has the final hidden states and the norm, the
// head's product with its rows and everything after it (log-probs over
// the p t ranks, the loss, sampling) are computed alike as over
// tensor-parallel ranks. That keeps the roles' code the same at any pp and
// lets each stage's autograd graph reach its blocks through the hand-overs:
//
//   s -> s + 1   forward: s sends, s + 1 receives in place of its input
//                (the other stages are not involved); backward: s + 1
//                sends the gradient of what it received back to s
//   last -> all  forward: broadcast from the last stage; backward: the
//                last stage keeps its own gradient (the loss behind it is
//                the same on every stage), the others pass zero back
//   embedding    forward: all-reduce over the p t ranks; backward: only
//                stage 0 read it, so the gradient is summed over the
//                stages (theirs zero) and each rank takes its rows' part
//
// The final norm and a value head are held by every stage; their
// gradients are the same on every stage.
//
// The schedule is GPipe's: a pass (forward, then its backward) splits its
// rows into `micro_batches` pipeline micro-batches, and every stage runs
// the forward of all of them, then the backward of all of them. The
// hand-overs between stages are sends left running, so stage s starts
// micro-batch m + 1 while s + 1 computes m, and in backward the same the
// other way: with m micro-batches the stages wait (stages - 1) / (m +
// stages - 1) of a pass instead of (stages - 1) / stages. Only the last
// hand-over, to every stage, is one collective for the whole pass, after
// every micro-batch's blocks. GPipe rather than 1F1B because a pass is one
// autograd graph here (the roles' loss and backward are the same at any
// pp): the graph's backward runs micro-batch after micro-batch on its own,
// which is GPipe's second phase; 1F1B interleaves one micro-batch's
// backward with a later one's forward and needs the loss per micro-batch
// before the other forwards, trading the bubble's size (the same as
// GPipe's) for fewer activations kept at once. The gradients are those of
// one pass over all the rows, summed in another order.
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
  int micro_batches = 1;  // per pass, when its rows allow (see above); a decoding step runs as one
  // The replica's p * t ranks, over which the embedding's and the head's
  // rows are split: group rank = this rank's share (make_mesh_groups'
  // vocab group). Required with stages.
  TensorParallel vocab;
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
// the heads, which are not a block's.
int64_t layer_of_parameter(const std::string& name);

// Stage `from`'s `x` handed on (see above): with `replicated_after` (the
// last hand-over: everything computed from the result is the same on every
// stage) to every stage, else to stage from + 1 only, the other stages
// getting their own x back. `shape` is the shape of what `from` sends: the
// receivers allocate it. Without autograd plain sends and broadcasts.
// `tag`: the pipeline micro-batch, so that sends and recvs of different
// micro-batches never pair up. The sends are left running: the stage
// waits for them with pp.group->wait_background_sends().
torch::Tensor pass_stage_output(const torch::Tensor& x, int from, const std::vector<int64_t>& shape,
                                const PipelineParallel& pp, bool replicated_after, int tag = 0);

// The embedding: each rank's lookup of the ids it holds (zero rows for the
// others) summed over pp.vocab. Backward sums the gradient over the stages
// (only stage 0's is not zero) and gives it to every rank's lookup. Every
// stage's graph must reach it (the hand-overs take it as their input), so
// that every stage takes part in that sum. Without autograd it sums x in
// place and returns it.
torch::Tensor reduce_embedding_over_stages(const torch::Tensor& x, const PipelineParallel& pp);

}  // namespace rlwb::workers::model
