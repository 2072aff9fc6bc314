// The c10d sub-groups of one model's parallel mesh (core::Mesh) on this
// rank, made from the pool's group (spmd_group.h):
//   tp group  the ranks of its data-parallel replica and pipeline stage
//             that hold the other shards of the same layers
//   pp group  the ranks of its data-parallel replica and tp index that
//             hold the other pipeline stages: activations pass between these
//   dp group  the ranks that hold the same shard in the other replicas:
//             gradients, loss counts and metrics are summed over these
//   vocab group  with pipeline stages, the replica's pp * tp ranks, over
//             which the embedding's and the head's rows are split
//             (model/pipeline_parallel.h); without stages the tp group
//             does that
// Rank r = (dp_index * pp + pp_index) * tp + tp_index, so a tp group is tp
// consecutive ranks, a pp group every tp-th rank of a replica's pp * tp
// and a dp group every (pp * tp)-th rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/rpc/dispatch.h"
#include "workers/model/pipeline_parallel.h"

namespace rlwb::workers {

class SpmdGroup;

// The pool ranks in each group of `rank`, in group-rank order.
std::vector<int> tensor_parallel_ranks(const core::Mesh& mesh, int rank);
std::vector<int> pipeline_parallel_ranks(const core::Mesh& mesh, int rank);
std::vector<int> data_parallel_ranks(const core::Mesh& mesh, int rank);

// Which share of the vocabulary `rank` holds among its replica's pp * tp
// ranks. In the order the model generates in (`generation`, the training
// mesh folded by core::generation_mesh, or the training mesh itself):
// generation shard g = generation stage * t_g + generation tp index, and
// inside it the micro-DP slot, so that the 3D-HybridEngine's one
// all-gather inside a micro-DP group yields generation shard g whole
// (shares g d_g .. g d_g + d_g - 1). Unfolded: stage * tp + tp index.
int vocab_index(const core::Mesh& generation, int rank);
// The replica's pp * tp ranks of `rank`, by vocab_index.
std::vector<int> vocab_parallel_ranks(const core::Mesh& training, const core::Mesh& generation, int rank);

struct MeshGroups {
  core::Mesh mesh;
  std::unique_ptr<SpmdGroup> tp;     // null when tp == 1
  std::unique_ptr<SpmdGroup> pp;     // null when pp == 1
  std::unique_ptr<SpmdGroup> dp;     // null when dp == 1, or when it is the whole pool (tp = pp = 1)
  std::unique_ptr<SpmdGroup> vocab;  // null when pp == 1; group rank = vocab_index
  int vocab_index = 0;

  // Pool rank `rank`'s place, for Transformer::shard_tensor_parallel and
  // shard_pipeline_parallel (in that order).
  model::TensorParallel tensor_parallel(int rank) const;
  model::PipelineParallel pipeline_parallel(int rank, int micro_batches = 1) const;
};

// Collective over the pool: every rank calls it with the same mesh and
// model name (which keeps two models' groups on one pool apart). A
// training mesh only: a folded one (core::generation_mesh) is refused,
// the generation replicas' groups are the engine's (hybrid_engine.h).
// `generation` orders the vocab group (vocab_index); the training mesh
// when the model generates as it trains.
std::shared_ptr<MeshGroups> make_mesh_groups(SpmdGroup& pool, const core::Mesh& mesh,
                                             const std::string& model);
std::shared_ptr<MeshGroups> make_mesh_groups(SpmdGroup& pool, const core::Mesh& mesh,
                                             const std::string& model, const core::Mesh& generation);

}  // namespace rlwb::workers
