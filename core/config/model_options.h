// A model's settings (graph file: models.<name>.config) as typed structs,
// parsed once with one documented default per setting. The validator parses
// them before anything starts (so a typo or a bad value is found by
// `rlwb validate`), and the worker's role parses the same checked JSON with
// the same function into the struct it then reads (workers/roles/).
//
//   model:      {architecture, hidden_size, ...}  a fresh model of that shape, or
//   checkpoint: DIR                               an HF-layout checkpoint to load
//   tokenizer:  char | {type: char, alphabet: "..."} | DIR or tokenizer.json
//   seed, micro_batch_size, pipeline_micro_batches
//   optim:      AdamW with linear warmup and cosine decay (trained roles)
//   sft:        {optim}: the warm start's optimizer (actor)
//   rollout:    sampling (actor, reference)
//   ppo:        the update (actor: policy loss; critic: value loss)
// Which sections a role reads depends on the role (model_sections_of());
// a section the role does not read is an unknown key.
#pragma once

#include "core/config/algorithm_names.h"
#include "core/config/section.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core::config {

enum class Architecture { kLlama, kQwen2 };
const EnumNames<Architecture>& architecture_names();

struct ModelShapeOptions {
  Architecture architecture = Architecture::kLlama;
  std::optional<int64_t> vocab_size;  // default: the tokenizer's vocabulary
  int64_t hidden_size = 64;
  std::optional<int64_t> intermediate_size;  // default: 4 * hidden_size
  int64_t num_layers = 2;
  int64_t num_heads = 4;
  std::optional<int64_t> num_kv_heads;  // default: num_heads
  int64_t max_position_embeddings = 64;
  bool tie_word_embeddings = false;
  double rope_theta = 10000.0;
  bool operator==(const ModelShapeOptions&) const = default;
  int64_t resolved_intermediate_size() const { return intermediate_size.value_or(4 * hidden_size); }
  int64_t resolved_kv_heads() const { return num_kv_heads.value_or(num_heads); }
};

struct TokenizerOptions {
  enum class Kind { kChar, kFile } kind = Kind::kChar;
  std::optional<std::string> alphabet;  // kChar: the characters, else the built-in set
  std::string path;                     // kFile: a tokenizer.json or its directory
  nlohmann::json as_written = "char";   // saved next to checkpoints
};

struct OptimOptions {
  double lr = 1e-3;
  double weight_decay = 0.0;
  std::vector<double> betas = {0.9, 0.999};
  double eps = 1e-8;
  int64_t warmup_steps = 0;
  int64_t total_steps = 0;  // 0: constant after the warmup
  double min_lr_ratio = 0.0;
  double grad_clip = 1.0;  // <= 0: no clipping
  // Linear warmup to lr, then cosine down to lr * min_lr_ratio at total_steps.
  double lr_at(int64_t step) const;
};

struct RolloutOptions {
  double temperature = 1.0;
  int64_t top_k = 0;  // 0: off
  double top_p = 1.0;
  int64_t max_new_tokens = 16;
};

struct PpoOptions {
  int64_t epochs = 1;
  int64_t mini_batch_size = 0;  // global rows per optimizer step; 0: the whole batch
  algorithms::LossAggMode loss_agg_mode = algorithms::LossAggMode::kTokenMean;
  // actor
  double clip_ratio = 0.2;
  std::optional<double> clip_ratio_low, clip_ratio_high;  // default: clip_ratio
  std::optional<double> clip_ratio_c = 3.0;               // dual clip; null: off
  double entropy_coeff = 0.0;
  bool use_kl_loss = false;
  double kl_loss_coef = 0.001;
  algorithms::KlEstimator kl_loss_type = algorithms::KlEstimator::kK3;
  // critic
  std::optional<double> cliprange_value = 0.5;  // null: no value clipping
};

// The settings of the demo roles (workers/roles/demo_roles.cpp), for
// model-free graphs and tests of the runtime.
struct DemoOptions {
  int64_t sleep_ms = 0;
  double factor = 1.0;
  int64_t fail_from_step = 1;
};

// A model that generates on a pool of its own (role rollout, verl's
// rollout workers apart from training): the actor whose weights it takes,
// streamed after every RL step over c10d broadcasts
// (workers/hybrid_engine/weight_stream.h, core/controller/weight_links.h).
struct WeightStreamSource {
  std::string from;  // the model, of role actor, on another pool
  int64_t bucket_mb = 32;
  bool only_changed = false;  // skip the tensors no update has moved (frozen ones)
};

struct ModelOptions {
  std::optional<ModelShapeOptions> model;  // a fresh model, or
  std::string checkpoint;                  // a checkpoint directory
  TokenizerOptions tokenizer;
  int64_t seed = 1;
  int64_t micro_batch_size = 64;
  // With pipeline stages (parallel.pp > 1): the pipeline micro-batches a
  // pass's rows split into (workers/model/pipeline_parallel.h).
  int64_t pipeline_micro_batches = 4;
  OptimOptions optim;
  std::optional<OptimOptions> sft_optim;  // default: optim
  RolloutOptions rollout;
  PpoOptions ppo;
  DemoOptions demo;
  std::optional<WeightStreamSource> weight_stream;  // role rollout: always set
  const OptimOptions& warm_start_optim() const { return sft_optim ? *sft_optim : optim; }
};

// Reads the setting `tokenizer` of `s` (a model's config, or a dataset
// task's) into `t`; leaves `t` as it is when the setting is absent.
void read_tokenizer(Section& s, TokenizerOptions& t);

// The sections a role reads; empty for a role this build does not know.
struct ModelSections {
  bool known = false, network = false, optim = false, sft = false, rollout = false;
  bool actor_ppo = false, critic_ppo = false, demo = false, weight_stream = false;
};
ModelSections model_sections_of(const std::string& role);

// Parses `config` (models.<model>.config) for `role`. Problems go to `ctx`
// with paths under `path`; the result then has defaults where they were.
ModelOptions parse_model_options(const std::string& role, const nlohmann::json& config,
                                 const std::string& path, ParseContext& ctx);
// The same, throwing ConfigError with every problem (the worker's call).
ModelOptions parse_model_options(const std::string& role, const nlohmann::json& config,
                                 const std::string& path);

}  // namespace rlwb::core::config
