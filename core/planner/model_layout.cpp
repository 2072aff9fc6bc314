#include "core/planner/model_layout.h"

#include "workers/hybrid_engine/hybrid_layout.h"

namespace rlwb::core::planner {
namespace {

namespace he = rlwb::workers::hybrid_engine;

he::HybridLayout hybrid_layout_of(const ModelLayout& l) {
  return he::HybridLayout({l.pp, l.tp, l.dp}, {l.generate_pp, l.generate_tp});
}

bool divides(int64_t k, int64_t n) { return k > 0 && n % k == 0; }

}  // namespace

std::vector<ModelLayout> candidate_layouts(const PlannedModel& model, int devices, const Workload& workload,
                                           const LayoutLimits& limits) {
  std::vector<ModelLayout> out;
  const ModelShape& s = model.shape;
  for (int tp = 1; tp <= devices && tp <= limits.max_tp; ++tp) {
    if (!divides(tp, s.num_heads) || !divides(tp, s.num_kv_heads) || !divides(tp, s.intermediate_size))
      continue;
    for (int pp = 1; tp * pp <= devices && pp <= limits.max_pp; ++pp) {
      if (!divides(pp, s.num_layers) || devices % (tp * pp) != 0) continue;
      const int dp = devices / (tp * pp);
      if (!divides(dp, workload.rows())) continue;
      if (model.trained && model.mini_batch_size > 0 && model.mini_batch_size % dp != 0) continue;
      ModelLayout base{tp, pp, dp, tp, pp};
      if (!model.generates || !limits.generation_layouts) {
        out.push_back(base);
        continue;
      }
      for (int gtp = 1; gtp <= tp; ++gtp)
        for (int gpp = 1; gpp <= pp; ++gpp) {
          ModelLayout l = base;
          l.generate_tp = gtp;
          l.generate_pp = gpp;
          try {
            hybrid_layout_of(l);  // the engine's own check: t_g | t, p_g | p
          } catch (const he::HybridLayoutError&) {
            continue;
          }
          if (!divides(gtp, s.num_heads) || !divides(gtp, s.num_kv_heads)) continue;
          out.push_back(l);
        }
    }
  }
  return out;
}

GenerationSwitch generation_switch(const ModelLayout& layout) {
  const he::HybridLayout hybrid = hybrid_layout_of(layout);
  const he::ReshardCost cost = he::hybrid_engine_cost(hybrid);
  return {cost.peak_memory, cost.bytes_moved, hybrid.micro_dp_size()};
}

}  // namespace rlwb::core::planner
