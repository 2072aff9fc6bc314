#include "core/planner/memory_model.h"

#include <algorithm>
#include <cmath>

namespace rlwb::core::planner {

namespace {

double kv_bytes_per_row(const PlannedModel& model, const ModelLayout& layout, const Workload& workload,
                        const Precision& precision) {
  return workload.sequence_length() * model.shape.kv_values_per_token() * precision.activation_bytes /
         (layout.generate_tp * layout.generate_pp);
}

}  // namespace

double generation_rows_in_flight(const PlannedModel& model, const ModelLayout& layout,
                                 const Workload& workload, const Precision& precision, double kv_budget) {
  const double rows = std::ceil(double(workload.rows()) / layout.generation_replicas());
  const double fit = std::floor(kv_budget / kv_bytes_per_row(model, layout, workload, precision));
  return std::max(1.0, std::min(rows, fit));
}

MemoryUse model_memory(const PlannedModel& model, const ModelLayout& layout, const Workload& workload,
                       const Precision& precision, double kv_budget) {
  const ModelShape& s = model.shape;
  const double shard = s.parameters() / (layout.tp * layout.pp);  // parameters per device
  MemoryUse use;
  use.resident = shard * precision.parameter_bytes;
  if (model.trained) {
    const double optimizer_share = precision.optimizer_sharded_over_dp ? 1.0 / layout.dp : 1.0;
    use.resident += shard * (precision.gradient_bytes + precision.optimizer_bytes * optimizer_share);
  }
  const double length = workload.sequence_length();
  const double rows_per_replica = std::ceil(double(workload.rows()) / layout.dp);
  const double micro = std::min<double>(model.micro_batch_size, rows_per_replica);
  const double layers_per_stage = double(s.num_layers) / layout.pp;
  // The head's rows are split over the tp ranks and the stages (model/pipeline_parallel.h).
  const double head_width = s.value_head ? 1.0 : double(s.vocab_size) / (layout.tp * layout.pp);
  const double logits = micro * length * head_width * 4.0;  // fp32 logits
  if (model.trained) {
    const double micro_batches = std::ceil(rows_per_replica / micro);
    const double in_flight = std::min<double>(layout.pp, micro_batches);
    const double per_layer =
        micro * length * s.hidden_size * 34.0 / layout.tp * (precision.activation_bytes / 2.0);
    use.transient = std::max(use.transient, per_layer * layers_per_stage * in_flight + logits);
  }
  // A forward pass keeps one layer's activations at a time, and the logits.
  const double forward = micro * length * (4.0 * s.hidden_size + 2.0 * s.intermediate_size) / layout.tp *
                             precision.activation_bytes +
                         logits;
  use.transient = std::max(use.transient, forward);
  if (model.generates) {
    const GenerationSwitch sw = generation_switch(layout);
    // The generation shard M/(t_g p_g) holds the rank's training shard.
    const double gathered = (s.parameters() * sw.peak_fraction - shard) * precision.parameter_bytes;
    const double rows = generation_rows_in_flight(model, layout, workload, precision, kv_budget);
    const double kv = rows * kv_bytes_per_row(model, layout, workload, precision);
    const double step_logits = rows * double(s.vocab_size) / (layout.generate_tp * layout.generate_pp) * 4.0;
    use.transient = std::max(use.transient, std::max(0.0, gathered) + kv + step_logits);
  }
  return use;
}

double set_memory(const std::vector<MemoryUse>& models) {
  double resident = 0, transient = 0;
  for (const auto& m : models) {
    resident += m.resident;
    transient = std::max(transient, m.transient);
  }
  return resident + transient;
}

}  // namespace rlwb::core::planner
