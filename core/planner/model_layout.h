// ModelLayout: one model's parallel sizes on its device set -- training
// p-t-d, and for the actor the generation layout p_g-t_g that the
// 3D-HybridEngine switches to (workers/hybrid_engine/hybrid_layout.h:
// t_g | t, p_g | p, d_g = (p t)/(p_g t_g) micro-DP ranks). candidate_layouts()
// lists the layouts the workers and the validator accept on n devices:
//   t divides the heads, the key/value heads and the MLP width, and fits
//     in one node (tensor parallelism needs the fast link);
//   p divides the layers and is at most limits.max_pp (max_pp 1 by
//     default: the workers pipeline within each pass and hold the head on
//     every stage, which the pipelined cost does not model; docs/planner.md);
//   d = n/(t p) divides the step's rows and the model's mini-batch;
//   (t_g, p_g) as hybrid_layout accepts them, only when
//     limits.generation_layouts (else the actor generates at (t, p)).
#pragma once

#include <vector>

#include "core/planner/plan_input.h"

namespace rlwb::core::planner {

struct ModelLayout {
  int tp = 1, pp = 1, dp = 1;
  int generate_tp = 1, generate_pp = 1;  // the actor's generation layout; (tp, pp) for the others
  int devices() const { return tp * pp * dp; }
  // Generation replicas on the model's devices: d * d_g.
  int generation_replicas() const { return devices() / (generate_tp * generate_pp); }
  bool operator==(const ModelLayout&) const = default;
};

struct LayoutLimits {
  int max_tp = 8;  // devices per node
  int max_pp = 1;
  bool generation_layouts = false;
};

std::vector<ModelLayout> candidate_layouts(const PlannedModel& model, int devices, const Workload& workload,
                                           const LayoutLimits& limits);

// The fraction of the model's parameter bytes a rank holds while it
// generates, and the fraction it receives in the switch (HybridFlow's
// table 2, from hybrid_layout's hybrid_engine_cost).
struct GenerationSwitch {
  double peak_fraction = 1;
  double received_fraction = 0;
  int micro_dp = 1;
};
GenerationSwitch generation_switch(const ModelLayout& layout);

}  // namespace rlwb::core::planner
