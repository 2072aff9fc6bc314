// Mesh: how a model's ranks are laid out (dp, pp, tp), and the mesh its
// generation replicas form under the 3D-HybridEngine -- the one place the
// rule for which generation layouts have such a mesh is written. Pure
// arithmetic, no LibTorch: the controller's dispatch (core/rpc/dispatch.h),
// the validator and the planner all ask generation_mesh().
#pragma once

#include <optional>

namespace rlwb::core {

// Parallel layout of a group. Rank r has coordinates with tp fastest:
// r = (dp_index * pp + pp_index) * tp + tp_index.
// A generation mesh (the 3D-HybridEngine's, generation_mesh() below) interleaves
// `stride` replicas inside each block of pp * tp * stride consecutive ranks:
// there a replica's ranks stand `stride` apart, and its place in the block
// is r % stride. With stride = 1 (every training mesh) the two agree.
struct Mesh {
  int dp = 1, pp = 1, tp = 1;
  int stride = 1;  // divides dp
  int world() const { return dp * pp * tp; }
  int dp_index(int rank) const { return rank / block() * stride + rank % stride; }
  int pp_index(int rank) const { return in_replica(rank) / tp % pp; }
  int tp_index(int rank) const { return in_replica(rank) % tp; }
  bool is_collector(int rank) const { return tp_index(rank) == 0 && pp_index(rank) == pp - 1; }
  bool operator==(const Mesh&) const = default;

 private:
  int block() const { return pp * tp * stride; }
  int in_replica(int rank) const { return rank % block() / stride; }  // pp_index * tp + tp_index
};

// The generation replicas of a model that trains on `training` (stride 1)
// and generates at generate_pp stages of generate_tp ranks, as
// HybridFlow's 3D-HybridEngine groups them (workers/hybrid_engine/
// hybrid_layout.h): d_g = (pp tp)/(generate_pp generate_tp) replicas per
// training replica, a replica's ranks d_g apart, so the mesh is
// {dp d_g, generate_pp, generate_tp, stride d_g}. That holds when the
// generation keeps the training's stages (generate_pp = pp) or runs at
// generate_tp = 1; with fewer stages and tp ranks at once (and sizes that
// do not divide the training ones) the replicas interleave otherwise, and
// the result is nullopt. The controller dispatches generate calls over it
// and the engine checks it builds the same replicas.
std::optional<Mesh> generation_mesh(const Mesh& training, int generate_pp, int generate_tp);

}  // namespace rlwb::core
