// What the model roles (actor, critic, reference, reward and cost models)
// share: building the tokenizer and the transformer from a role's config,
// the optimizer with its warmup + cosine schedule, data-parallel gradient
// averaging over the pool's c10d group, micro-batching, and checkpoints.
//
// A role's config (models.<name>.config in the graph file) is parsed by
// core/config/model_options.h, which lists every setting and its default;
// the validator parsed the same JSON before the run started.
#pragma once

#include "core/algorithms/loss_aggregation.h"
#include "core/config/model_options.h"
#include "workers/method_registry.h"
#include "workers/model/flat_adamw.h"
#include "workers/model/sequence_scores.h"
#include "workers/model/chat_template.h"
#include "workers/model/tokenizer.h"
#include "workers/model/transformer.h"
#include "workers/roles/overlapped_gradient_sum.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::workers::roles {

// This rank's place in its model's mesh (core::Mesh, workers/mesh_groups.h).
// Gradients, loss counts and metrics are summed over the data-parallel
// group: the ranks that hold the same shard and got different rows.
int data_parallel_size(const WorkerEnv& env);
SpmdGroup& data_parallel_group(WorkerEnv& env);  // only when data_parallel_size > 1
model::TensorParallel tensor_parallel_of(const WorkerEnv& env);
// `micro_batches`: the pipeline micro-batches of a pass (the model's
// pipeline_micro_batches setting).
model::PipelineParallel pipeline_parallel_of(const WorkerEnv& env, int64_t micro_batches = 1);
// Where a rank's model lives: on a cuda pool its own GPU (rank r takes GPU
// r % the GPUs the process sees -- one, where the launcher or Slurm sets
// CUDA_VISIBLE_DEVICES per worker), else the CPU. Throws when a cuda
// pool's worker sees no GPU.
torch::Device model_device(const WorkerEnv& env);

// The mask with the rows a split added to even out its chunks (core/rpc/
// dispatch.h, kPaddingRowsKey) set to 0, so they count in no loss,
// gradient or metric.
torch::Tensor without_padding_rows(const core::Batch& in, const torch::Tensor& mask);

// Thrown for a bad role config; the message names the key.
class RoleConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using core::config::ModelOptions;
using core::config::OptimOptions;

std::shared_ptr<model::Tokenizer> make_tokenizer(const core::config::TokenizerOptions& options);
// The chat template next to a tokenizer file (model::load_chat_template);
// null for a char tokenizer, for none, or for one outside the rendered
// subset (then `refused` says why).
std::shared_ptr<const model::ChatTemplate> make_chat_template(const core::config::TokenizerOptions& options,
                                                              std::string& refused);

class TrainState;

// What every model role holds: its config, tokenizer and network.
struct ModelRole : Role {
  std::string where;  // "models.<name>.config", for errors
  ModelOptions options;
  std::shared_ptr<model::Tokenizer> tokenizer;
  // The chat template next to a tokenizer.json (load_chat_template), if any.
  // One RLWB cannot render does not stop the role: text prompts need none;
  // why it was refused is kept for the first prompt of chat messages.
  std::shared_ptr<const model::ChatTemplate> chat_template;
  std::string chat_template_refused;
  model::Transformer net{nullptr};
  torch::Device device{torch::kCPU};  // net's, model_device(); inputs are moved here
  // Input port `port` of `in` on `device` (replies may stay there: the wire
  // copies a CUDA tensor to the host when it leaves the process).
  torch::Tensor input(const core::Batch& in, const std::string& port) const;
  model::SequenceBatch sequences(const core::Batch& in) const;  // sequence_columns() on `device`
  // [prompt | answer] rows on `device` from text: the prompts as
  // tokenize_prompts() makes them, each answer encoded and ended with the
  // eos token (the SFT targets; the chosen and rejected responses of a
  // preference pair). `response_mask` gets the answers' mask [B, R].
  // Throws a ModelError naming the setting when a row does not fit the
  // model's context.
  model::SequenceBatch text_sequences(const std::vector<nlohmann::json>& prompts,
                                      const std::vector<nlohmann::json>& answers,
                                      torch::Tensor& response_mask) const;
  // Parses the config for `role` (core/config/model_options.h), builds the
  // tokenizer and the network with `head`; every rank ends with rank 0's
  // weights, then keeps its tensor-parallel share of them.
  void init(const std::string& role, const nlohmann::json& role_config, WorkerEnv& env, model::Head head);
  // Replaces the network by a checkpoint's, sharded as init shards.
  void load(const std::string& dir, model::Head head, WorkerEnv& env);
  // Keeps this rank's tensor-parallel shard and pipeline stage of `net`.
  void shard(WorkerEnv& env);
  // Writes the whole model (gathered from the tp ranks and pipeline stages)
  // and the tokenizer note; collective over them, only pool rank 0 writes.
  void save(const std::string& dir, WorkerEnv& env);
  // Where the optimizers keep the parameters: in place when something else
  // owns their storage (the 3D-HybridEngine's buffers), else one flat buffer.
  model::ParameterStorage parameter_storage = model::ParameterStorage::kFlatBuffer;
  std::unique_ptr<TrainState> make_train_state(const OptimOptions& settings);
};

// [prompt | response] rows from the input ports prompt_ids, prompt_mask,
// responses and response_mask, and a row range of them.
model::SequenceBatch sequence_columns(const core::Batch& in);
// Those four ports (all required), for a method's registration.
std::vector<core::PortSpec> sequence_ports();
model::SequenceBatch rows_of(const model::SequenceBatch& s, int64_t begin, int64_t end);

// args.dir of a save/load call; throws when it is missing.
std::string checkpoint_dir_arg(const CallContext& ctx);

// The model of a role: from `checkpoint` or from `model` + the tokenizer's
// vocabulary, with the given head. Seeds torch with config.seed first, and
// checks that the tokenizer fits the vocabulary and that prompts of
// `max_prompt_tokens` plus responses fit the context (when > 0).
model::Transformer make_model(const ModelOptions& options, const model::Tokenizer& tokenizer,
                              model::Head head, const std::string& where);

// AdamW over a model's parameters (flat buffers, model/flat_adamw.h), its
// schedule, and the data-parallel gradient sum. One `step()` per optimizer
// step.
class TrainState {
 public:
  TrainState(model::Transformer& model, OptimOptions settings,
             model::ParameterStorage storage = model::ParameterStorage::kFlatBuffer);

  // Sums gradients over the ranks of the pool, clips, steps AdamW at the
  // scheduled lr. Returns {grad_norm, lr}. `ride_along` values, if given,
  // are summed over the ranks in the same all-reduce (in float32), which
  // saves a collective round of their own. With `divide_by_first`, the
  // summed gradients are divided by the summed ride_along[0] before
  // clipping: a caller back-propagates its part of the loss as a sum and
  // passes its loss count there. Otherwise each rank's loss must already be
  // normalised by the global count.
  std::pair<double, double> step(WorkerEnv& env, std::vector<double>* ride_along = nullptr,
                                 bool divide_by_first = false);
  // Called just before the optimizer step's last backward pass (with more
  // than one rank): where that pays -- on CUDA, or with a core to spare
  // beyond the ranks' compute threads -- the gradient sum then runs in
  // buckets beside that backward (roles/overlapped_gradient_sum.h), with
  // `ride_along` summed in float64 beside it, and step() only waits for
  // what is left; elsewhere step() sums as without the call. step() must
  // get the same number of ride_along values.
  void sum_during_next_backward(WorkerEnv& env, const std::vector<double>& ride_along = {});
  int64_t steps_done() const { return steps_; }
  // The optimizer's moments, its update count and the schedule's position
  // (optimizer steps done): a checkpoint's part of this state
  // (roles/role_state.h). restore() throws when the sizes differ.
  std::map<std::string, torch::Tensor> state() const;
  void restore(const std::map<std::string, torch::Tensor>& state);

 private:
  void sum_over_ranks(WorkerEnv& env, std::vector<double>* ride_along);
  double gradient_norm();

  model::TensorParallel tp_;
  model::PipelineParallel pp_;
  std::vector<bool> replicated_;      // per optimizer parameter: whole on every tp rank
  std::vector<bool> on_every_stage_;  // per optimizer parameter: held by every pipeline stage
  OptimOptions settings_;
  model::FlatAdamW optimizer_;
  std::optional<bool> overlap_pays_;                   // decided at the first call
  std::unique_ptr<OverlappedGradientSum> overlapped_;  // made at the first overlapped step
  int64_t steps_ = 0;
};

// The sum of `value` over the data-parallel group (1 rank: itself).
double all_reduce_sum(WorkerEnv& env, double value);
// Makes every rank's parameters equal to pool rank 0's (before sharding).
void broadcast_parameters(model::Transformer& model, WorkerEnv& env);

// The update loops of actor and critic: this rank's rows per mini-batch
// (ppo.mini_batch_size counts global rows; 0 = all rows), and the
// mini-batch's sizes (the critic sums them over the ranks in an all-reduce
// of their own; the actor's ride along with its gradients).
int64_t local_mini_batch_rows(const core::config::PpoOptions& ppo, int64_t rows, const WorkerEnv& env);
struct LossCounts {
  double tokens = 0;     // response tokens
  double sequences = 0;  // rows with at least one response token
  // What the loss is divided by: tokens for token-mean, sequences otherwise.
  double count(core::algorithms::LossAggMode mode) const;
  double loss_normalizer(core::algorithms::LossAggMode mode) const { return std::max(1.0, count(mode)); }
};
// This rank's counts of a mini-batch's response mask, and their sums over
// the ranks.
LossCounts loss_counts(const torch::Tensor& response_mask);
LossCounts global_counts(WorkerEnv& env, const torch::Tensor& response_mask);

// The critic's update metrics are sums of shares: each micro-batch adds its
// loss (already normalised by the global count) and its ratios weighted by
// its tokens' share of the mini-batch's global tokens, so the sum over
// micro-batches and ranks is the mini-batch's value whatever the split. A value every rank
// has alike (lr, grad norm) or computes over its own rows adds value/world.
// Returns, per metric, the sum over the ranks divided by the optimizer steps.
nlohmann::json sum_metrics_over_ranks(WorkerEnv& env, const std::map<std::string, double>& sums,
                                      double updates);

// [begin, end) row ranges of at most `size` rows.
std::vector<std::pair<int64_t, int64_t>> row_ranges(int64_t rows, int64_t size);

// Tokenised prompts, left-padded. A prompt that is text becomes
// [bos] + encode(text). A prompt that is a list of chat messages (verl's
// `prompt` column) is rendered by `chat_template` with the generation
// prompt and encoded without an added bos, as transformers'
// apply_chat_template(tokenize=True) does (the template writes its own);
// without a template such a prompt is an error (saying `refused`, why the
// tokenizer's template could not be loaded, when there is one).
struct PromptIds {
  torch::Tensor ids, mask;
};
// One prompt's ids as tokenize_prompts() makes them (before the padding).
std::vector<int64_t> prompt_token_ids(const model::Tokenizer& tokenizer, const nlohmann::json& prompt,
                                      const model::ChatTemplate* chat_template, const std::string& refused);
PromptIds tokenize_prompts(const model::Tokenizer& tokenizer, const std::vector<nlohmann::json>& prompts,
                           const model::ChatTemplate* chat_template = nullptr,
                           const std::string& refused = "");

// The text of each response row up to (not including) the first stop token.
std::vector<nlohmann::json> decode_responses(const model::Tokenizer& tokenizer,
                                             const torch::Tensor& responses,
                                             const torch::Tensor& response_mask);

// Checkpoints: save (HF layout + the tokenizer description) and reload in place.
void save_checkpoint(model::Transformer& model, const nlohmann::json& tokenizer_config,
                     const std::string& dir);
model::Transformer load_checkpoint_for(const std::string& dir, model::Head head, int64_t seed);

}  // namespace rlwb::workers::roles
