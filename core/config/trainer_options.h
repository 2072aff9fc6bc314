// The trainer section of the graph file as typed structs: the RL steps,
// the algorithm settings the controller's builtins read (advantage
// estimator, KL in the reward, Safe-RLHF's multiplier), and the phases
// around the steps: warm start, evaluation, samples, checkpoints, final save. The phases'
// node lists are read by the graph loader (Experiment::phase_nodes); this
// parse only marks them known. Used by the validator and the controller.
#pragma once

#include "core/config/algorithm_names.h"
#include "core/config/section.h"

#include <optional>
#include <string>
#include <vector>

namespace rlwb::core::config {

struct KlControlOptions {
  algorithms::KlControlType type = algorithms::KlControlType::kFixed;
  double kl_coef = 0.001;
  double target_kl = 0.1;
  double horizon = 10000.0;
};

struct SafeRlhfOptions {
  double cost_threshold = 0.0;
  double lambda_init = 1.0;
  double lambda_lr = 0.1;
  std::optional<double> lambda_max;
  double lambda_kp = 0.0;  // proportional gain (PI control); 0: the plain ascent
  algorithms::LagrangeStep lambda_step = algorithms::LagrangeStep::kLogLambda;
};

struct AlgorithmOptions {
  algorithms::AdvantageEstimator adv_estimator = algorithms::AdvantageEstimator::kGrpo;
  double gamma = 1.0;
  double lam = 1.0;
  bool norm_adv_by_std_in_grpo = true;
  bool use_kl_in_reward = false;
  algorithms::KlEstimator kl_penalty = algorithms::KlEstimator::kK1;
  KlControlOptions kl_ctrl;
  SafeRlhfOptions safe_rlhf;
};

struct WarmStartOptions {
  bool enabled = false;  // the section is present
  int64_t steps = 0;
  std::optional<int64_t> batch_size;  // default: task.batch_size
  std::string sync_from;              // "" : no sync
  std::vector<std::string> sync_to;
};

struct EvalOptions {
  bool enabled = false;               // the section is present
  int64_t every = 0;                  // 0: only before the first RL step
  std::optional<int64_t> batch_size;  // default: the task's test split
  std::string score;                  // the score column the eval nodes write
};

struct SamplesOptions {
  bool enabled = false;
  int64_t rows = 4;
  std::string prompt = "prompts", response = "response_text", score = "token_level_scores";
  std::vector<std::string> details;
};

// trainer.checkpoint: the state a resume continues from (rlwb run --resume),
// written every `every` RL steps; the last `keep` are kept
// (core/controller/checkpoint_store.h).
struct CheckpointOptions {
  int64_t every = 0;  // 0: no checkpoints
  int64_t keep = 2;
};

// trainer.on_worker_failure: what a run does when a worker process dies or
// hangs (its heartbeats stop): fail, or restart every worker and continue
// from the last checkpoint (from the start when there is none yet), at
// most trainer.max_restarts times (core/controller/controller.h).
enum class WorkerFailurePolicy { kFail, kRestart };

struct TrainerOptions {
  int64_t steps = 1;
  AlgorithmOptions algorithm;
  WarmStartOptions warm_start;
  EvalOptions eval;
  SamplesOptions samples;
  CheckpointOptions checkpoint;
  WorkerFailurePolicy on_worker_failure = WorkerFailurePolicy::kFail;
  int64_t max_restarts = 3;
  std::vector<std::string> save;                                            // models saved at the end
  std::vector<std::string> token_masks = {"prompt_mask", "response_mask"};  // perf/throughput counts these
};

TrainerOptions parse_trainer_options(const nlohmann::json& trainer, ParseContext& ctx);

}  // namespace rlwb::core::config
