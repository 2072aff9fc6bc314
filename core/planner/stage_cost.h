// The time of one stage of the step -- a generation, a forward pass, a
// training update -- of one model in one layout on a device profile.
// Compute is FLOPs over the achieved rates (weights' matmuls at
// matmul_flops, attention at attention_flops); a decode step is the slower
// of its compute and its memory traffic (the weight shard and the KV cache
// read once per token); every operator costs op_overhead_s and every call
// call_overhead_s (dispatch and collect). Communication, from
// collective_cost.h:
//   tensor parallel  2 all-reduces of the activations per layer forward,
//                    2 more backward; one all-gather per sampled token
//   pipeline         one activation send per stage boundary and micro-batch,
//                    and the bubble: (m + p - 1)/m of the pipelined time for
//                    m micro-batches; generation passes each token through
//                    the p_g stages one after another
//   data parallel    one gradient all-reduce per optimizer step
//   the switch       the 3D-HybridEngine's all-gather inside each micro-DP
//                    group before generating (when t_g p_g < t p)
// Generation decodes the rows the KV cache budget holds at once
// (generation_rows_in_flight()), in waves. As the workers do, a prompt
// that n >= 2 samples share is run once, in the prefill and in every
// scoring and training pass; its samples' responses run against it.
#pragma once

#include "core/planner/device_profile.h"
#include "core/planner/model_layout.h"
#include "core/planner/plan_input.h"
#include "core/planner/precision.h"

namespace rlwb::core::planner {

struct StageTime {
  double compute = 0;        // matmuls, attention, memory traffic, operator overhead
  double communication = 0;  // collectives and sends
  double overhead = 0;       // the call's dispatch and collect
  double total() const { return compute + communication + overhead; }
  StageTime& operator+=(const StageTime& o) {
    compute += o.compute, communication += o.communication, overhead += o.overhead;
    return *this;
  }
};

struct StageContext {
  const DeviceProfile& profile;
  const Precision& precision;
  const Workload& workload;
  bool spans_nodes = false;  // the model's device set is larger than a node
};

StageTime stage_time(StageKind kind, const PlannedModel& model, const ModelLayout& layout,
                     const StageContext& ctx);

}  // namespace rlwb::core::planner
