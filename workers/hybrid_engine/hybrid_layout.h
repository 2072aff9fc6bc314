// HybridLayout: where each rank of a model's pool sits when the model
// trains with layout p-t-d (pipeline stages, tensor-parallel ranks,
// data-parallel replicas) and generates with p_g-t_g, as HybridFlow's
// 3D-HybridEngine arranges them (HybridFlow, section 5). Pure arithmetic;
// the engine (hybrid_engine.h) and the benchmark (bench/bench_reshard.cpp)
// build their c10d groups from it.
//
// Inside one training replica (its p*t model-parallel ranks) the
// generation model runs as d_g = (p t)/(p_g t_g) replicas of p_g*t_g ranks:
//   micro-DP group      the d_g ranks that together hold one generation
//                       shard: consecutive ranks (with p_g = p), so the
//                       switch to generation is one all-gather among them
//   generation TP group the t_g ranks of one generation replica's stage:
//                       ranks at stride d_g
//   generation PP group the p_g stages of one generation replica
// A rank's generation shard is the union of the training shards of its
// micro-DP group, its own among them: nothing it holds for training is
// dropped or held twice when it generates.
//
// Example, t = 4, d = 2, t_g = 2 (d_g = 2), ranks 0..7 (paper, figure 8):
//   training TP groups   {0 1 2 3} {4 5 6 7}
//   micro-DP groups      {0 1} {2 3} {4 5} {6 7}
//   generation TP groups {0 2} {1 3} {4 6} {5 7}
//
// Coordinates of a rank with training stage s and tp index i (rank order
// of core::Mesh: r = (dp_index * p + s) * t + i): with ps = p/p_g and
// ts = t/t_g, its generation stage is s/ps, its generation tp index i/ts
// and its place in the micro-DP group (the generation replica it belongs
// to) (s % ps) * ts + i % ts.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "core/mesh/mesh.h"

namespace rlwb::workers::hybrid_engine {

// A layout that the engine cannot honour; the message names the setting
// and says what would fix it.
class HybridLayoutError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

struct TrainingLayout {
  int pp = 1, tp = 1, dp = 1;
};

struct GenerationLayout {
  int pp = 1, tp = 1;
};

// One rank's coordinates in both layouts.
struct HybridPlacement {
  int replica = 0;  // training data-parallel index
  int stage = 0, tp_index = 0;
  int generation_stage = 0, generation_tp_index = 0;
  int micro_dp_index = 0;  // its slot in the micro-DP group = its generation replica inside `replica`
};

class HybridLayout {
 public:
  // Throws HybridLayoutError when a size is below 1 or when t_g does not
  // divide t or p_g does not divide p (then a generation shard would not
  // be a union of training shards; the paper's t_g p_g | t p follows).
  HybridLayout(TrainingLayout train, GenerationLayout generate);

  const TrainingLayout& train() const { return train_; }
  const GenerationLayout& generate() const { return generate_; }
  int world() const { return train_.pp * train_.tp * train_.dp; }
  // d_g: ranks per micro-DP group = generation replicas per training replica.
  int micro_dp_size() const { return micro_dp_; }
  core::Mesh training_mesh() const;
  // The generation replicas as a mesh (dp = d d_g, folded by p/p_g and
  // t/t_g): what the controller dispatches a generate call over
  // (core::generation_mesh).
  core::Mesh generation_mesh() const;

  // Throws HybridLayoutError for a rank outside [0, world()).
  HybridPlacement placement(int rank) const;
  // The pool ranks of each of `rank`'s groups, in group-rank order (the
  // micro-DP group's by slot, the generation TP group's by tp index).
  std::vector<int> micro_dp_ranks(int rank) const;
  std::vector<int> generation_tp_ranks(int rank) const;
  std::vector<int> generation_pp_ranks(int rank) const;
  // The p_g t_g ranks of `rank`'s generation replica, over which its
  // vocabulary is split, by generation stage, then generation tp index.
  std::vector<int> generation_vocab_ranks(int rank) const;

 private:
  int rank_of(int replica, int stage, int tp_index) const;
  // The rank of a replica with these generation coordinates.
  int rank_at(int replica, int generation_stage, int generation_tp_index, int micro_dp_index) const;

  TrainingLayout train_;
  GenerationLayout generate_;
  int micro_dp_ = 1;
};

// HybridFlow's table 2: per rank, as fractions of the model's parameter
// bytes M, for a training layout and a generation layout.
struct ReshardCost {
  double bytes_moved = 0;  // received by one rank in the switch to generation
  double peak_memory = 0;  // parameter memory of one rank while generating
  double redundancy = 0;   // of it, what duplicates the rank's training shard
};
// (a) DeepSpeed-Chat: every rank all-gathers the whole model over all
//     t p d ranks (ZeRO-3 partitions of M/(tpd)).
ReshardCost deepspeed_chat_cost(const HybridLayout& layout);
// (b) HybridFlow-V: every rank gathers the whole model within its
//     training TP/PP group, then keeps its generation shard.
ReshardCost hybridflow_v_cost(const HybridLayout& layout);
// (c) HybridFlow's engine: one all-gather inside each micro-DP group.
ReshardCost hybrid_engine_cost(const HybridLayout& layout);

}  // namespace rlwb::workers::hybrid_engine
