// Memory per device of one model in one layout, in bytes, the way the
// planner prunes placements:
//   resident   weights M/(t p) (x parameter bytes), and for a trained model
//              its gradients and optimizer states (the latter / d when the
//              precision shards them over the data-parallel ranks): kept
//              between stages
//   transient  the largest stage's extra: training activations of a
//              micro-batch (34 s h bytes per layer and token at 16 bits,
//              Korthikanti et al. 2022, / t, x the micro-batches a first
//              pipeline stage holds) and its logits; a forward pass's
//              activations and logits; generation's KV cache for its rows
//              plus the resharding peak, the gathered generation shard
//              M/(t_g p_g) less the training shard it contains; the KV
//              cache holds the rows decoded at once, at most a budget
//              (generation_rows_in_flight())
// Models colocated on a set keep their resident memory side by side and
// run their stages one at a time: the set needs the sum of the resident
// parts plus the largest transient one (set_memory()).
#pragma once

#include <vector>

#include "core/planner/model_layout.h"
#include "core/planner/plan_input.h"
#include "core/planner/precision.h"

namespace rlwb::core::planner {

struct MemoryUse {
  double resident = 0;
  double transient = 0;
  double total() const { return resident + transient; }
};

// `kv_budget`: the bytes per device generation may fill with its KV cache
// (DeviceProfile::kv_cache_budget()).
MemoryUse model_memory(const PlannedModel& model, const ModelLayout& layout, const Workload& workload,
                       const Precision& precision, double kv_budget);

// The rows a generation replica decodes at once: all of its rows, or as
// many as the KV cache budget holds (at least one); the rest wait for the
// next wave.
double generation_rows_in_flight(const PlannedModel& model, const ModelLayout& layout,
                                 const Workload& workload, const Precision& precision, double kv_budget);

// Per device, for models colocated on one set.
double set_memory(const std::vector<MemoryUse>& models);

}  // namespace rlwb::core::planner
