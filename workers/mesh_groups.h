// The c10d sub-groups of one model's parallel mesh (core::Mesh) on this
// rank, made from the pool's group (spmd_group.h):
//   tp group  the ranks of its data-parallel replica and pipeline stage
//             that hold the other shards of the same layers
//   pp group  the ranks of its data-parallel replica and tp index that
//             hold the other pipeline stages: activations pass between these
//   dp group  the ranks that hold the same shard in the other replicas:
//             gradients, loss counts and metrics are summed over these
// Rank r = (dp_index * pp + pp_index) * tp + tp_index, so a tp group is tp
// consecutive ranks, a pp group every tp-th rank of a replica's pp * tp
// and a dp group every (pp * tp)-th rank.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/rpc/dispatch.h"

namespace rlwb::workers {

class SpmdGroup;

// The pool ranks in each group of `rank`, in group-rank order.
std::vector<int> tensor_parallel_ranks(const core::Mesh& mesh, int rank);
std::vector<int> pipeline_parallel_ranks(const core::Mesh& mesh, int rank);
std::vector<int> data_parallel_ranks(const core::Mesh& mesh, int rank);

struct MeshGroups {
  core::Mesh mesh;
  std::unique_ptr<SpmdGroup> tp;  // null when tp == 1
  std::unique_ptr<SpmdGroup> pp;  // null when pp == 1
  std::unique_ptr<SpmdGroup> dp;  // null when dp == 1, or when it is the whole pool (tp = pp = 1)
};

// Collective over the pool: every rank calls it with the same mesh and
// model name (which keeps two models' groups on one pool apart). A
// training mesh only: a folded one (core::generation_mesh) is refused,
// the generation replicas' groups are the engine's (hybrid_engine.h).
std::shared_ptr<MeshGroups> make_mesh_groups(SpmdGroup& pool, const core::Mesh& mesh,
                                             const std::string& model);

}  // namespace rlwb::workers
