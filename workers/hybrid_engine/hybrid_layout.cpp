#include "workers/hybrid_engine/hybrid_layout.h"

namespace rlwb::workers::hybrid_engine {
namespace {

std::string divisors_of(int n) {
  std::string out;
  for (int k = 1; k <= n; ++k)
    if (n % k == 0) out += (out.empty() ? "" : ", ") + std::to_string(k);
  return out;
}

void require_positive(const char* layout, const char* setting, int value) {
  if (value < 1)
    throw HybridLayoutError(std::string(layout) + " layout: '" + setting + "' = " + std::to_string(value) +
                            " must be at least 1");
}

void require_divides(const char* setting, int generation, int training) {
  if (training % generation != 0)
    throw HybridLayoutError(
        "generation layout: '" + std::string(setting) + "' = " + std::to_string(generation) +
        " must divide the training layout's '" + setting + "' = " + std::to_string(training) +
        ", so that each generation shard is a union of training shards (the 3D-HybridEngine's "
        "t_g p_g | t p); choose one of " +
        divisors_of(training));
}

// The ranks rank_at(k) for k = 0..count-1: one group, in group-rank order.
template <class RankAt>
std::vector<int> ranks_of(int count, RankAt rank_at) {
  std::vector<int> ranks;
  ranks.reserve(count);
  for (int k = 0; k < count; ++k) ranks.push_back(rank_at(k));
  return ranks;
}

}  // namespace

HybridLayout::HybridLayout(TrainingLayout train, GenerationLayout generate)
    : train_(train), generate_(generate) {
  require_positive("training", "pp", train.pp);
  require_positive("training", "tp", train.tp);
  require_positive("training", "dp", train.dp);
  require_positive("generation", "pp", generate.pp);
  require_positive("generation", "tp", generate.tp);
  require_divides("tp", generate.tp, train.tp);
  require_divides("pp", generate.pp, train.pp);
  micro_dp_ = (train.pp * train.tp) / (generate.pp * generate.tp);
}

int HybridLayout::rank_of(int replica, int stage, int tp_index) const {
  return (replica * train_.pp + stage) * train_.tp + tp_index;
}

int HybridLayout::rank_at(int replica, int generation_stage, int generation_tp_index,
                          int micro_dp_index) const {
  const int stages_per = train_.pp / generate_.pp, tps_per = train_.tp / generate_.tp;
  const int stage = generation_stage * stages_per + micro_dp_index / tps_per;
  const int tp_index = generation_tp_index * tps_per + micro_dp_index % tps_per;
  return rank_of(replica, stage, tp_index);
}

HybridPlacement HybridLayout::placement(int rank) const {
  if (rank < 0 || rank >= world())
    throw HybridLayoutError("rank " + std::to_string(rank) + " is outside the layout's " +
                            std::to_string(world()) + " ranks (pp * tp * dp)");
  const int stages_per = train_.pp / generate_.pp, tps_per = train_.tp / generate_.tp;
  HybridPlacement at;  // the inverse of rank_of()
  at.replica = rank / (train_.pp * train_.tp);
  at.stage = (rank / train_.tp) % train_.pp;
  at.tp_index = rank % train_.tp;
  at.generation_stage = at.stage / stages_per;
  at.generation_tp_index = at.tp_index / tps_per;
  at.micro_dp_index = (at.stage % stages_per) * tps_per + at.tp_index % tps_per;
  return at;
}

std::vector<int> HybridLayout::micro_dp_ranks(int rank) const {
  const HybridPlacement at = placement(rank);
  return ranks_of(micro_dp_,
                  [&](int j) { return rank_at(at.replica, at.generation_stage, at.generation_tp_index, j); });
}

std::vector<int> HybridLayout::generation_tp_ranks(int rank) const {
  const HybridPlacement at = placement(rank);
  return ranks_of(generate_.tp,
                  [&](int m) { return rank_at(at.replica, at.generation_stage, m, at.micro_dp_index); });
}

std::vector<int> HybridLayout::generation_pp_ranks(int rank) const {
  const HybridPlacement at = placement(rank);
  return ranks_of(generate_.pp,
                  [&](int s) { return rank_at(at.replica, s, at.generation_tp_index, at.micro_dp_index); });
}

std::vector<int> HybridLayout::generation_vocab_ranks(int rank) const {
  const HybridPlacement at = placement(rank);
  return ranks_of(generate_.pp * generate_.tp, [&](int v) {
    return rank_at(at.replica, v / generate_.tp, v % generate_.tp, at.micro_dp_index);
  });
}

ReshardCost deepspeed_chat_cost(const HybridLayout& layout) {
  const double n = layout.world();
  return {(n - 1) / n, 1.0, 1.0 / n};
}

ReshardCost hybridflow_v_cost(const HybridLayout& layout) {
  const double model_parallel = layout.train().pp * layout.train().tp;
  return {(model_parallel - 1) / model_parallel, 1.0, 1.0 / model_parallel};
}

ReshardCost hybrid_engine_cost(const HybridLayout& layout) {
  const double model_parallel = layout.train().pp * layout.train().tp;
  const double generation = layout.generate().pp * layout.generate().tp;
  return {(model_parallel - generation) / (generation * model_parallel), 1.0 / generation, 0.0};
}

core::Mesh HybridLayout::training_mesh() const { return {train_.dp, train_.pp, train_.tp}; }

core::Mesh HybridLayout::generation_mesh() const {
  // The constructor checked what core::generation_mesh asks: t_g | t, p_g | p.
  return *core::generation_mesh(training_mesh(), generate_.pp, generate_.tp);
}

}  // namespace rlwb::workers::hybrid_engine
