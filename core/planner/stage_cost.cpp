#include "core/planner/stage_cost.h"

#include <algorithm>
#include <cmath>

#include "core/planner/collective_cost.h"
#include "core/planner/memory_model.h"

namespace rlwb::core::planner {
namespace {

// Operators per layer and micro-batch: a forward block (norms, q/k/v/o,
// RoPE, attention, MLP, residuals), and backward about twice as many.
constexpr double kForwardOpsPerLayer = 16;
constexpr double kDecodeOpsPerLayer = 20;

// Whether the workers run a prompt its rows share once
// (workers/model/shared_prompts.h): they do when the rows hold each prompt
// at least twice on average, which a batch of n >= 2 samples per prompt
// does, also after its split over dp ranks and into micro-batches (both
// keep a prompt's samples together while the pieces hold whole groups).
bool prompts_shared(const Workload& w, double rows) {
  return w.samples_per_prompt >= 2 && rows >= 2.0 * std::ceil(rows / w.samples_per_prompt);
}

// Prompt positions a pass or a prefill over `rows` rows runs.
double prompt_positions(const Workload& w, double rows) {
  const double prompts = prompts_shared(w, rows) ? std::ceil(rows / w.samples_per_prompt) : rows;
  return prompts * w.prompt_length;
}

// A collective of the model's groups; when the model keeps more processes
// busy than the host runs at once, its hops wait on descheduled peers
// (collective_cost.h).
double collective(const StageContext& ctx, const ModelLayout& layout, Collective kind, int ranks,
                  double bytes, bool spans_nodes) {
  const int busy = ctx.profile.concurrent_devices;
  return collective_seconds(ctx.profile, kind, ranks, bytes, spans_nodes,
                            busy > 0 && layout.devices() > busy ? layout.devices() : 0);
}

struct Pass {
  double rows_per_replica, micro, micro_batches, length;
  double positions;  // per micro-batch: its responses, and its prompts once each when shared
};

Pass pass_of(const PlannedModel& model, const ModelLayout& layout, const Workload& w) {
  Pass p;
  p.rows_per_replica = std::ceil(double(w.rows()) / layout.dp);
  p.micro = std::min<double>(model.micro_batch_size, p.rows_per_replica);
  p.micro_batches = std::ceil(p.rows_per_replica / p.micro);
  p.length = w.sequence_length();
  p.positions = prompt_positions(w, p.micro) + p.micro * w.response_length;
  return p;
}

// One forward pass over the replica's rows (passes = 1), or forward and
// backward (passes = 3 in FLOPs, 2 x the tensor-parallel all-reduces).
StageTime pipelined_pass(const PlannedModel& model, const ModelLayout& layout, const StageContext& ctx,
                         bool backward) {
  const ModelShape& s = model.shape;
  const Pass p = pass_of(model, layout, ctx.workload);
  const DeviceProfile& prof = ctx.profile;
  const double flop_factor = backward ? 3.0 : 1.0;
  const double tokens = p.micro_batches * p.positions;
  const double weight_flops = tokens * s.weight_flops_per_token() * flop_factor / (layout.tp * layout.pp);
  const double attention_flops =
      tokens * s.attention_flops_per_token(p.length / 2) * flop_factor / (layout.tp * layout.pp);
  const double layers = double(s.num_layers) / layout.pp;
  const double ops = layers * p.micro_batches * kForwardOpsPerLayer * flop_factor;
  const double bubble = (p.micro_batches + layout.pp - 1) / p.micro_batches;
  StageTime t;
  t.compute = (weight_flops / prof.matmul_flops() + attention_flops / prof.attention_flops() +
               ops * prof.op_overhead_s) *
              bubble;
  const double activation = p.positions * s.hidden_size * ctx.precision.activation_bytes;
  const double tp_reduce = collective(ctx, layout, Collective::kAllReduce, layout.tp, activation, false);
  t.communication = tp_reduce * 2 * (backward ? 2 : 1) * layers * p.micro_batches * bubble;
  if (layout.pp > 1)
    t.communication += (p.micro_batches + layout.pp - 2) * (backward ? 2 : 1) *
                       collective(ctx, layout, Collective::kBroadcast, 2, activation, ctx.spans_nodes);
  return t;
}

StageTime train_time(const PlannedModel& model, const ModelLayout& layout, const StageContext& ctx) {
  StageTime one = pipelined_pass(model, layout, ctx, true);
  const Workload& w = ctx.workload;
  const double shard = model.shape.parameters() / (layout.tp * layout.pp);
  const double steps_per_epoch =
      model.mini_batch_size > 0 ? std::max<double>(1, double(w.rows()) / model.mini_batch_size) : 1.0;
  // The gradient sum and the optimizer's pass over its states, per step.
  const double gradient_sum = collective(ctx, layout, Collective::kAllReduce, layout.dp,
                                         shard * ctx.precision.gradient_bytes, ctx.spans_nodes);
  const double state_bytes =
      shard * (ctx.precision.parameter_bytes + ctx.precision.gradient_bytes + ctx.precision.optimizer_bytes);
  const double optimizer = 2 * state_bytes / ctx.profile.effective_memory_bandwidth();
  StageTime t;
  t.compute = model.epochs * (one.compute + steps_per_epoch * optimizer);
  t.communication = model.epochs * (one.communication + steps_per_epoch * gradient_sum);
  return t;
}

StageTime generate_time(const PlannedModel& model, const ModelLayout& layout, const StageContext& ctx) {
  const ModelShape& s = model.shape;
  const DeviceProfile& prof = ctx.profile;
  const Workload& w = ctx.workload;
  const double shards = layout.generate_tp * layout.generate_pp;
  const double replica_rows = std::ceil(double(w.rows()) / layout.generation_replicas());
  const double rows = generation_rows_in_flight(model, layout, w, ctx.precision, prof.kv_cache_budget());
  const double waves = std::ceil(replica_rows / rows);
  const double layers = double(s.num_layers) / layout.generate_pp;
  const double act = ctx.precision.activation_bytes;
  StageTime t;
  // Prefill: the prompts in one pass, a prompt its samples share once.
  const double prompt_tokens = prompt_positions(w, rows);
  t.compute +=
      (prompt_tokens * s.weight_flops_per_token() / shards / prof.matmul_flops() +
       prompt_tokens * s.attention_flops_per_token(w.prompt_length / 2.0) / shards / prof.attention_flops() +
       s.num_layers * kForwardOpsPerLayer * prof.op_overhead_s);
  t.communication += 2 * s.num_layers *
                     collective(ctx, layout, Collective::kAllReduce, layout.generate_tp,
                                prompt_tokens * s.hidden_size * act, false);
  // Decode: each new token reads the weight shard and the KV cache; a
  // token passes the generation stages one after another.
  const double context = w.prompt_length + w.response_length / 2.0;
  const double weight_bytes = s.parameters() * ctx.precision.parameter_bytes / shards;
  const double kv_bytes = rows * context * s.kv_values_per_token() * act / shards;
  const double memory = (weight_bytes + kv_bytes) / prof.effective_memory_bandwidth();
  const double compute = rows * s.weight_flops_per_token() / shards / prof.matmul_flops() +
                         rows * s.attention_flops_per_token(context) / shards / prof.attention_flops();
  const double per_stage = std::max(memory, compute) + layers * kDecodeOpsPerLayer * prof.op_overhead_s;
  const double per_token_compute = per_stage * layout.generate_pp;
  double per_token_comm = 2 * s.num_layers *
                              collective(ctx, layout, Collective::kAllReduce, layout.generate_tp,
                                         rows * s.hidden_size * act, false) +
                          collective(ctx, layout, Collective::kAllGather, layout.generate_tp,
                                     rows * 8.0 * layout.generate_tp, false);
  if (layout.generate_pp > 1)
    per_token_comm += (layout.generate_pp - 1) * collective(ctx, layout, Collective::kBroadcast, 2,
                                                            rows * s.hidden_size * act, ctx.spans_nodes);
  t.compute += w.response_length * per_token_compute;
  t.communication += w.response_length * per_token_comm;
  t.compute *= waves;
  t.communication *= waves;
  // The switch to the generation layout.
  const GenerationSwitch sw = generation_switch(layout);
  if (sw.micro_dp > 1)
    t.communication += collective(ctx, layout, Collective::kAllGather, sw.micro_dp,
                                  s.parameters() * ctx.precision.parameter_bytes * sw.peak_fraction,
                                  sw.micro_dp > prof.devices_per_node);
  return t;
}

}  // namespace

StageTime stage_time(StageKind kind, const PlannedModel& model, const ModelLayout& layout,
                     const StageContext& ctx) {
  StageTime t;
  switch (kind) {
    case StageKind::kGenerate:
      t = generate_time(model, layout, ctx);
      break;
    case StageKind::kForward:
      t = pipelined_pass(model, layout, ctx, false);
      break;
    case StageKind::kTrain:
      t = train_time(model, layout, ctx);
      break;
    case StageKind::kController:
      return t;
  }
  t.overhead = ctx.profile.call_overhead(stage_kind_name(kind));
  return t;
}

}  // namespace rlwb::core::planner
