// PlanInput: what the planner reads from an experiment -- its models (shape,
// micro-batch, epochs, whether the graph trains or samples them), the
// graph's nodes as stages with the stages each waits for, and the workload
// of one step (prompts, samples per prompt, prompt and response lengths).
// Pools and parallel layouts in the file are ignored: choosing them is the
// planner's job.
//
// A node's kind comes from its method: `generate` samples (the actor),
// `update` and `sft_update` train, any other model method is a forward
// pass (log_prob, values, score); reward modules and builtins run in the
// controller and cost no device time. A stage waits for the stages that
// write a column it reads.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/model_options.h"
#include "core/graph/experiment.h"
#include "core/planner/model_shape.h"

namespace rlwb::core::planner {

enum class StageKind { kGenerate, kForward, kTrain, kController };
const char* stage_kind_name(StageKind kind);

struct PlannedModel {
  std::string name, role;
  ModelShape shape;
  int64_t micro_batch_size = 1;
  int64_t epochs = 1;           // passes of each update over the step's rows
  int64_t mini_batch_size = 0;  // rows per optimizer step; 0: the whole batch
  bool trained = false;         // the graph updates it: it keeps gradients and optimizer state
  bool generates = false;       // the graph samples from it
};

struct Stage {
  std::string node;  // the node's id
  StageKind kind = StageKind::kController;
  int model = -1;          // index into PlanInput::models; -1 for controller stages
  std::vector<int> after;  // stages (indices) whose columns it reads
};

struct Workload {
  int64_t prompts = 1;             // distinct prompts per step
  int64_t samples_per_prompt = 1;  // responses per prompt
  int64_t prompt_length = 1;       // tokens
  int64_t response_length = 1;     // tokens (the actor's max_new_tokens)
  int64_t rows() const { return prompts * samples_per_prompt; }
  int64_t sequence_length() const { return prompt_length + response_length; }
};

struct PlanInput {
  std::string experiment;            // its name (a profile's compute_scale is per experiment)
  std::vector<PlannedModel> models;  // in the file's (sorted) model order
  std::vector<Stage> stages;         // in an order where every stage comes after those it waits for
  Workload workload;
  int model_index(const std::string& name) const;  // -1 when absent
};

// The vocabulary of a tokenizer setting (the composition root gives the
// workers' tokenizers; core/ does not build them).
using TokenizerVocab = std::function<int64_t(const config::TokenizerOptions&)>;

// Reads `exp` (already validated, or at least loadable). Throws PlanError
// for a model without a transformer (demo roles), a checkpoint whose
// config.json cannot be read, a graph without an actor that generates, or a
// cycle. `prompt_length` > 0 replaces the task's prompt length (the
// tokens of the longest prompt: exact for arithmetic, the task's
// max_prompt_length for datasets, else the actor's context minus its
// response length).
PlanInput plan_input_of(const Experiment& exp, const TokenizerVocab& vocab, int64_t prompt_length = 0);

}  // namespace rlwb::core::planner
