// Mesh: how a model's ranks are laid out (dp, pp, tp), and the mesh its
// generation replicas form under the 3D-HybridEngine. Pure arithmetic, no
// LibTorch: the controller builds each model's generation mesh with
// generation_mesh(), the dispatch (core/rpc/dispatch.h) splits a generate
// call over it, and the engine's HybridLayout (workers/hybrid_engine/
// hybrid_layout.h) places its ranks the same way (a test holds them equal).
#pragma once

#include <optional>

namespace rlwb::core {

// Parallel layout of a group. A training mesh (both folds 1) orders its
// ranks with tp fastest: r = (dp_index * pp + pp_index) * tp + tp_index.
//
// A generation mesh (the 3D-HybridEngine's, generation_mesh() below) is
// the training mesh folded: each generation replica holds pp_fold
// consecutive training stages and tp_fold consecutive training tp ranks
// per generation stage and tp rank, so a training replica of
// pp * pp_fold * tp * tp_fold ranks holds pp_fold * tp_fold generation
// replicas (d_g). A rank at training stage s and tp index k of training
// replica R (the coordinates above, with pp * pp_fold stages of
// tp * tp_fold ranks) has generation stage s / pp_fold, generation tp
// index k / tp_fold and generation replica
// R d_g + (s % pp_fold) tp_fold + k % tp_fold -- HybridLayout::placement's
// coordinates (workers/hybrid_engine/hybrid_layout.h). With p_g = p the
// replicas interleave at stride d_g; with fewer stages and t_g > 1 no one
// stride describes them, which is why the fold is kept per axis.
struct Mesh {
  int dp = 1, pp = 1, tp = 1;
  int pp_fold = 1, tp_fold = 1;  // training stages / tp ranks per generation stage / tp rank
  int world() const { return dp * pp * tp; }
  // Generation replicas per training replica (d_g); 1 for a training mesh.
  int fold() const { return pp_fold * tp_fold; }
  bool folded() const { return fold() > 1; }
  int dp_index(int rank) const {
    return rank / block() * fold() + stage_in_block(rank) % pp_fold * tp_fold + tp_in_block(rank) % tp_fold;
  }
  int pp_index(int rank) const { return stage_in_block(rank) / pp_fold; }
  int tp_index(int rank) const { return tp_in_block(rank) / tp_fold; }
  bool is_collector(int rank) const { return tp_index(rank) == 0 && pp_index(rank) == pp - 1; }
  bool operator==(const Mesh&) const = default;

 private:
  // One training replica: pp * pp_fold training stages of tp * tp_fold ranks.
  int block() const { return pp * pp_fold * tp * tp_fold; }
  int stage_in_block(int rank) const { return rank % block() / (tp * tp_fold); }
  int tp_in_block(int rank) const { return rank % (tp * tp_fold); }
};

// The generation replicas of a model that trains on `training` (not
// folded) and generates at generate_pp stages of generate_tp ranks, as
// HybridFlow's 3D-HybridEngine groups them (workers/hybrid_engine/
// hybrid_layout.h): {dp d_g, generate_pp, generate_tp, pp / generate_pp,
// tp / generate_tp} with d_g = (pp tp)/(generate_pp generate_tp). nullopt
// when a generation size is below 1 or does not divide the training one
// (a generation shard would not be a union of training shards). The
// controller dispatches generate calls over it and the engine checks it
// builds the same replicas.
std::optional<Mesh> generation_mesh(const Mesh& training, int generate_pp, int generate_tp);

}  // namespace rlwb::core
