// Shared by the GRPO-step benchmarks (bench_grpo_step: RLWB vs TRL in
// interleaved pairs; bench_grpo_scaling: how the step's cost grows): the
// default experiment trimmed to RL steps only, one RLWB run of it on fresh
// workers, and one run of TRL's GRPOTrainer (bench/bench_grpo_trl.py) on
// the same model shape, task and settings.
#pragma once

#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/registries.h"
#include "bench/bench_model_common.h"
#include "core/config/experiment_options.h"
#include "core/controller/controller.h"

namespace rlwb::bench {

// The default experiment with `steps` RL steps of `prompts` x `n` rows and
// nothing else (no warm start, evaluation, saving or samples), one optimizer
// step per RL step, plus any further Hydra-style overrides.
inline core::Experiment grpo_step_experiment(int prompts, int n, int steps,
                                             const std::vector<std::string>& more = {}) {
  std::vector<std::string> overrides = {
      "trainer.steps=" + std::to_string(steps),
      "~trainer.warm_start",
      "~trainer.eval",
      "~trainer.save",
      "~trainer.samples",
      "task.batch_size=" + std::to_string(prompts),
      "task.samples_per_prompt=" + std::to_string(n),
      "models.actor.config.ppo.mini_batch_size=" + std::to_string(prompts * n)};
  overrides.insert(overrides.end(), more.begin(), more.end());
  return core::load_experiment_file(std::string(RLWB_SOURCE_DIR) + "/experiments/default.yaml", overrides);
}

struct RlwbRun {
  double tokens_per_s = 0;
  double step_s = 0;                                   // median wall time of a timed step
  std::vector<double> steps_s;                         // every timed step's wall time, in order
  std::map<std::string, std::vector<double>> node_ms;  // timing_s/<node>, compute_s/<node>, in ms
};

// One RLWB run of `exp` on fresh workers: tokens/s over the steps after `warmup`.
inline RlwbRun run_rlwb(const core::Experiment& exp, int warmup) {
  core::ControllerOptions options = rlwb::app::controller_options();
  options.worker_binary = RLWB_WORKER_BIN;
  options.log_dir = (std::filesystem::temp_directory_path() / "rlwb-bench-grpo").string();
  double seconds = 0, tokens = 0;
  std::vector<double> step_s;
  RlwbRun out;
  options.hooks.step_done = [&](const core::StepReport& r, const auto&) {
    if (r.step <= warmup) return;
    seconds += r.seconds;
    step_s.push_back(r.seconds);
    tokens += r.metrics.at("perf/throughput") * r.seconds;
    for (const auto& [k, v] : r.metrics)
      if (k.starts_with("timing_s/") || k.starts_with("compute_s/")) out.node_ms[k].push_back(v * 1e3);
  };
  core::RunResult result = core::Controller(exp, options, nullptr).run();
  if (result.status != "finished")
    throw std::runtime_error("RLWB run " + result.status + ": " + result.error);
  out.tokens_per_s = tokens / seconds;
  out.step_s = median_of(step_s);
  out.steps_s = step_s;
  return out;
}

// TRL's GRPOTrainer on the actor's shape and settings of `exp`; `processes`
// x `threads` is its layout. The peer script's JSON ("tokens_per_s",
// "step_s_median", ...), or {"error": ...}.
inline nlohmann::json run_trl(const core::Experiment& exp, int steps, int warmup, int processes,
                              int threads) {
  const auto options = core::config::parse_experiment_options(exp);
  const auto& actor = options.models.at("actor");
  const auto& arch = *actor.model;
  auto str = [](auto v) { return std::to_string(v); };
  return run_reference("bench_grpo_trl.py", {"--prompts",
                                             str(options.task.batch_size),
                                             "--num-generations",
                                             str(options.task.samples_per_prompt),
                                             "--max-new-tokens",
                                             str(actor.rollout.max_new_tokens),
                                             "--max-positions",
                                             str(arch.max_position_embeddings),
                                             "--steps",
                                             str(steps),
                                             "--warmup",
                                             str(warmup),
                                             "--processes",
                                             str(processes),
                                             "--threads",
                                             str(threads),
                                             "--hidden",
                                             str(arch.hidden_size),
                                             "--intermediate",
                                             str(arch.resolved_intermediate_size()),
                                             "--layers",
                                             str(arch.num_layers),
                                             "--heads",
                                             str(arch.num_heads),
                                             "--kv-heads",
                                             str(arch.resolved_kv_heads()),
                                             "--lr",
                                             str(actor.optim.lr),
                                             "--beta",
                                             str(actor.ppo.kl_loss_coef)});
}

}  // namespace rlwb::bench
