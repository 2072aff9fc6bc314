#include "workers/roles/model_setup.h"

#include "workers/model/char_tokenizer.h"
#include "workers/model/model_error.h"
#include "workers/model/generation.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/mesh_groups.h"
#include "workers/spmd_group.h"

#include <ATen/Parallel.h>
#include <sched.h>

#include <cmath>
#include <filesystem>
#include <mutex>
#include <thread>
#include <fstream>

namespace rlwb::workers::roles {

namespace fs = std::filesystem;

std::shared_ptr<model::Tokenizer> make_tokenizer(const core::config::TokenizerOptions& options) {
  if (options.kind == core::config::TokenizerOptions::Kind::kFile)
    return std::shared_ptr<model::Tokenizer>(model::load_tokenizer(options.path));
  if (options.alphabet) return std::make_shared<model::CharTokenizer>(*options.alphabet);
  return std::make_shared<model::CharTokenizer>();
}

std::shared_ptr<const model::ChatTemplate> make_chat_template(const core::config::TokenizerOptions& options,
                                                              std::string& refused) {
  if (options.kind != core::config::TokenizerOptions::Kind::kFile) return nullptr;
  try {
    if (auto loaded = model::load_chat_template(options.path))
      return std::make_shared<const model::ChatTemplate>(std::move(*loaded));
  } catch (const model::ModelError& e) {
    refused = e.what();
  }
  return nullptr;
}

static model::TransformerConfig transformer_config(const core::config::ModelShapeOptions& m, int64_t vocab,
                                                   const std::string& where) {
  model::TransformerConfig c;
  c.architecture = m.architecture == core::config::Architecture::kQwen2 ? model::Architecture::kQwen2
                                                                        : model::Architecture::kLlama;
  c.qkv_bias = m.architecture == core::config::Architecture::kQwen2;
  c.vocab_size = m.vocab_size.value_or(vocab);
  c.hidden_size = m.hidden_size;
  c.intermediate_size = m.resolved_intermediate_size();
  c.num_layers = m.num_layers;
  c.num_heads = m.num_heads;
  c.num_kv_heads = m.resolved_kv_heads();
  c.max_position_embeddings = m.max_position_embeddings;
  c.tie_word_embeddings = m.tie_word_embeddings;
  c.rope_theta = m.rope_theta;
  c.bos_token_id = model::CharTokenizer::kBos;
  c.eos_token_id = model::CharTokenizer::kEos;
  c.pad_token_id = model::CharTokenizer::kPad;
  c.validate(where + ".model");
  return c;
}

model::Transformer make_model(const ModelOptions& options, const model::Tokenizer& tokenizer,
                              model::Head head, const std::string& where) {
  // torch's default generator is one per process: ranks that share a
  // process (tests run them as threads) seed and draw one at a time.
  static std::mutex seeding;
  std::lock_guard<std::mutex> one_at_a_time(seeding);
  torch::manual_seed(options.seed);
  model::Transformer m{nullptr};
  if (!options.checkpoint.empty()) {
    const std::string& dir = options.checkpoint;
    model::LoadOptions load;
    load.head = head;
    m = model::load_hf_checkpoint(dir, load);
    model::check_tokenizer_fits(tokenizer, where + ".tokenizer", m->config(), dir + "/config.json");
  } else if (options.model) {
    auto c = transformer_config(*options.model, tokenizer.vocab_size(), where);
    const auto& ids = tokenizer.special_ids();
    if (ids.bos >= 0) c.bos_token_id = ids.bos;
    if (ids.eos >= 0) c.eos_token_id = ids.eos;
    if (ids.pad >= 0) c.pad_token_id = ids.pad;
    c.head = head;
    m = model::Transformer(c);
    model::check_tokenizer_fits(tokenizer, where + ".tokenizer", m->config(), where + ".model");
  } else {
    throw RoleConfigError(where +
                          ": needs 'model: {...}' (a fresh model of that shape) or 'checkpoint: DIR'");
  }
  return m;
}

int data_parallel_size(const WorkerEnv& env) { return env.mesh.dp; }

SpmdGroup& data_parallel_group(WorkerEnv& env) {
  if (env.mesh_groups && env.mesh_groups->dp) return *env.mesh_groups->dp;
  return env.spmd();  // tp = pp = 1: the pool is the data-parallel group
}

model::TensorParallel tensor_parallel_of(const WorkerEnv& env) {
  if (env.mesh.tp <= 1) return {};
  if (!env.mesh_groups || !env.mesh_groups->tp)
    throw std::logic_error("tensor_parallel_of: the mesh groups of model '" + env.model + "' were not made");
  return env.mesh_groups->tensor_parallel(env.rank);
}

model::PipelineParallel pipeline_parallel_of(const WorkerEnv& env, int64_t micro_batches) {
  if (env.mesh.pp <= 1) return {};
  if (!env.mesh_groups || !env.mesh_groups->pp)
    throw std::logic_error("pipeline_parallel_of: the mesh groups of model '" + env.model +
                           "' were not made");
  return env.mesh_groups->pipeline_parallel(env.rank, static_cast<int>(micro_batches));
}

torch::Device model_device(const WorkerEnv& env) {
  if (env.device != "cuda") return torch::kCPU;
  const int64_t gpus = static_cast<int64_t>(torch::cuda::device_count());
  if (gpus == 0)
    throw RoleConfigError("models." + env.model + ": its pool has device: cuda, but worker rank " +
                          std::to_string(env.rank) + " on " + env.host +
                          " sees no GPU (CUDA_VISIBLE_DEVICES, driver); use device: cpu here");
  return torch::Device(torch::kCUDA, static_cast<c10::DeviceIndex>(env.rank % gpus));
}

torch::Tensor ModelRole::input(const core::Batch& in, const std::string& port) const {
  return in.tensor(port).to(device);
}

model::SequenceBatch ModelRole::sequences(const core::Batch& in) const {
  model::SequenceBatch s = sequence_columns(in);
  s.input_ids = s.input_ids.to(device);
  s.attention_mask = s.attention_mask.to(device);
  return s;
}

model::SequenceBatch ModelRole::text_sequences(const std::vector<nlohmann::json>& prompts,
                                               const std::vector<nlohmann::json>& answers,
                                               torch::Tensor& response_mask) const {
  auto prompt_ids = tokenize_prompts(*tokenizer, prompts, chat_template.get(), chat_template_refused);
  std::vector<std::vector<int64_t>> targets;
  int64_t longest = 0;
  for (auto& a : answers) {
    auto ids = tokenizer->encode(a.is_string() ? a.get<std::string>() : a.dump());
    ids.push_back(tokenizer->special_ids().eos);
    longest = std::max<int64_t>(longest, ids.size());
    targets.push_back(std::move(ids));
  }
  const int64_t rows = static_cast<int64_t>(targets.size());
  auto responses = torch::zeros({rows, longest}, torch::kInt64);
  response_mask = torch::zeros({rows, longest}, torch::kInt64);
  auto ids = responses.accessor<int64_t, 2>();
  auto real = response_mask.accessor<int64_t, 2>();
  for (int64_t i = 0; i < rows; ++i)
    for (size_t j = 0; j < targets[i].size(); ++j) ids[i][j] = targets[i][j], real[i][j] = 1;
  const int64_t context = net->config().max_position_embeddings;
  if (prompt_ids.ids.size(1) + longest > context)
    throw model::ModelError(where + ": a prompt of " + std::to_string(prompt_ids.ids.size(1)) +
                            " tokens with an answer of " + std::to_string(longest) +
                            " tokens does not fit the context (setting 'max_position_embeddings' = " +
                            std::to_string(context) + "); raise it in " + where + ".model");
  auto seq = model::join_prompt_response(prompt_ids.ids, prompt_ids.mask, responses, response_mask);
  seq.input_ids = seq.input_ids.to(device);
  seq.attention_mask = seq.attention_mask.to(device);
  return seq;
}

torch::Tensor without_padding_rows(const core::Batch& in, const torch::Tensor& mask) {
  const int64_t added = std::min<int64_t>(core::padding_rows(in), mask.size(0));
  if (added <= 0) return mask;
  torch::Tensor real = mask.clone();
  real.narrow(0, mask.size(0) - added, added).zero_();
  return real;
}

void ModelRole::init(const std::string& role, const nlohmann::json& role_config, WorkerEnv& env,
                     model::Head head) {
  where = "models." + env.model + ".config";
  if (env.mesh.world() != env.world)
    throw RoleConfigError("models." + env.model +
                          ".parallel: dp*pp*tp = " + std::to_string(env.mesh.world()) + " but the pool has " +
                          std::to_string(env.world) + " ranks");
  options = core::config::parse_model_options(role, role_config, where);
  tokenizer = make_tokenizer(options.tokenizer);
  chat_template = make_chat_template(options.tokenizer, chat_template_refused);
  net = make_model(options, *tokenizer, head, where);
  broadcast_parameters(net, env);
  if (env.world > 1 && (env.mesh.tp > 1 || env.mesh.pp > 1))
    env.mesh_groups = make_mesh_groups(env.spmd(), env.mesh, env.model, env.generation());
  shard(env);
  device = model_device(env);
  net->to(device);
}

void ModelRole::load(const std::string& dir, model::Head head, WorkerEnv& env) {
  net = load_checkpoint_for(dir, head, options.seed);
  model::check_tokenizer_fits(*tokenizer, where + ".tokenizer", net->config(), dir + "/config.json");
  broadcast_parameters(net, env);
  shard(env);
  net->to(device);
}

void ModelRole::shard(WorkerEnv& env) {
  net->shard_tensor_parallel(tensor_parallel_of(env));
  net->shard_pipeline_parallel(pipeline_parallel_of(env, options.pipeline_micro_batches));
}

void ModelRole::save(const std::string& dir, WorkerEnv& env) {
  model::Transformer whole = net->tensor_parallel().active() || net->pipeline_parallel().active()
                                 ? model::Transformer(net->unsharded_copy())
                                 : net;
  if (env.rank == 0) save_checkpoint(whole, options.tokenizer.as_written, dir);
}

model::SequenceBatch sequence_columns(const core::Batch& in) {
  return model::join_prompt_response(in.tensor("prompt_ids"), in.tensor("prompt_mask"),
                                     in.tensor("responses"), in.tensor("response_mask"));
}

std::vector<core::PortSpec> sequence_ports() {
  return {core::required_port("prompt_ids", "[B,P] prompt tokens, left-padded"),
          core::required_port("prompt_mask", "[B,P] 1 on prompt tokens"),
          core::required_port("responses", "[B,R] response tokens"),
          core::required_port("response_mask", "[B,R] 1 on response tokens")};
}

model::SequenceBatch rows_of(const model::SequenceBatch& s, int64_t begin, int64_t end) {
  return {s.input_ids.slice(0, begin, end), s.attention_mask.slice(0, begin, end), s.response_length};
}

std::string checkpoint_dir_arg(const CallContext& ctx) {
  std::string dir = ctx.args.value("dir", "");
  if (dir.empty()) throw std::runtime_error("save_checkpoint/load_checkpoint need args {dir: PATH}");
  return dir;
}

namespace {

std::vector<torch::Tensor> trainable(model::Transformer& model) {
  std::vector<torch::Tensor> params;
  for (auto& p : model->parameters())
    if (p.requires_grad()) params.push_back(p);
  return params;
}

}  // namespace

std::unique_ptr<TrainState> ModelRole::make_train_state(const OptimOptions& settings) {
  return std::make_unique<TrainState>(net, settings, parameter_storage);
}

TrainState::TrainState(model::Transformer& model, OptimOptions settings, model::ParameterStorage storage)
    : settings_(settings),
      optimizer_(trainable(model),
                 model::AdamWSettings{settings.betas.at(0), settings.betas.at(1), settings.eps,
                                      settings.weight_decay},
                 storage),
      tp_(model->tensor_parallel()),
      pp_(model->pipeline_parallel()) {
  for (auto& p : model->named_parameters()) {
    if (!p.value().requires_grad()) continue;
    replicated_.push_back(model::tensor_parallel_dim(p.key()) < 0);
    on_every_stage_.push_back(model::layer_of_parameter(p.key()) < 0 && !model::is_vocab_parameter(p.key()));
  }
}

// The norm of the whole model's gradient: with tensor parallelism each rank
// holds a part of the split parameters' gradients and all of the
// replicated ones', so the squares of the replicated count 1/tp on each rank
// before the sum over the tp ranks; with pipeline parallelism each stage
// holds its blocks' and its share of the vocabulary's, and all of the rest
// (the final norm, a value head), which counts 1/pp before the sum over the
// stages.
double TrainState::gradient_norm() {
  torch::Tensor& gradients = optimizer_.flat_gradients();
  if (!tp_.active() && !pp_.active()) return gradients.norm().item<double>();
  const auto& params = optimizer_.parameters();
  const auto& offsets = optimizer_.offsets();
  torch::Tensor squares = torch::zeros({1}, gradients.options().dtype(torch::kFloat64));
  for (size_t i = 0; i < params.size(); ++i) {
    torch::Tensor part = gradients.narrow(0, offsets[i], params[i].numel()).to(torch::kFloat64);
    squares += part.dot(part) / ((replicated_[i] ? tp_.size : 1) * (on_every_stage_[i] ? pp_.stages : 1));
  }
  if (tp_.active()) tp_.group->all_reduce_sum(squares);
  if (pp_.active()) pp_.group->all_reduce_sum(squares);
  return std::sqrt(squares.item<double>());
}

namespace {

// Overlapping the gradient sum with backward pays where the sum has
// something of its own to run on: NCCL beside the GPU's kernels, or on CPU
// a core beyond the ranks' compute threads for Gloo's threads. With every
// core computing (the default experiment on 2 cores: 2 ranks x 1 thread),
// Gloo's threads take cores from backward instead: measured there, the
// update was 2-17% slower overlapped than blocking (bench/RESULTS.md,
// session 11). Every rank of a pool runs on this host.
bool overlap_pays(const WorkerEnv& env, const torch::Tensor& gradients) {
  if (gradients.is_cuda()) return true;
  cpu_set_t usable;
  CPU_ZERO(&usable);
  const int cores = sched_getaffinity(0, sizeof usable, &usable) == 0
                        ? CPU_COUNT(&usable)
                        : static_cast<int>(std::thread::hardware_concurrency());
  return cores > env.world * at::get_num_threads();
}

}  // namespace

void TrainState::sum_during_next_backward(WorkerEnv& env, const std::vector<double>& ride_along) {
  if (data_parallel_size(env) <= 1) return;
  if (!overlap_pays_) overlap_pays_ = overlap_pays(env, optimizer_.gradient_buffer());
  if (!*overlap_pays_) return;  // step() sums after backward, in one blocking all-reduce
  if (!overlapped_)
    overlapped_ = std::make_unique<OverlappedGradientSum>(optimizer_, data_parallel_group(env));
  overlapped_->arm(ride_along);
}

void TrainState::sum_over_ranks(WorkerEnv& env, std::vector<double>* ride_along) {
  if (data_parallel_size(env) <= 1) return;
  if (overlapped_ && overlapped_->armed()) {
    std::vector<double> sums = overlapped_->finish();
    const size_t expected = ride_along ? ride_along->size() : 0;
    if (sums.size() != expected)
      throw std::logic_error("TrainState::step: " + std::to_string(expected) +
                             " ride-along values, but sum_during_next_backward was given " +
                             std::to_string(sums.size()));
    if (ride_along) *ride_along = std::move(sums);
    return;
  }
  torch::Tensor& gradients = optimizer_.flat_gradients();
  if (ride_along != nullptr && !ride_along->empty()) {
    const int64_t n = gradients.numel(), extra = static_cast<int64_t>(ride_along->size());
    torch::Tensor both = torch::empty({n + extra}, gradients.options());
    both.narrow(0, 0, n).copy_(gradients);
    both.narrow(0, n, extra).copy_(torch::tensor(*ride_along, torch::kFloat64).to(gradients.dtype()));
    data_parallel_group(env).all_reduce_sum(both);
    gradients.copy_(both.narrow(0, 0, n));
    torch::Tensor sums = both.narrow(0, n, extra).to(torch::kCPU, torch::kFloat64).contiguous();
    std::copy_n(sums.data_ptr<double>(), extra, ride_along->begin());
  } else {
    data_parallel_group(env).all_reduce_sum(gradients);
  }
}

std::pair<double, double> TrainState::step(WorkerEnv& env, std::vector<double>* ride_along,
                                           bool divide_by_first) {
  sum_over_ranks(env, ride_along);
  torch::Tensor& gradients = optimizer_.flat_gradients();
  if (divide_by_first && ride_along != nullptr && !ride_along->empty())
    gradients.div_(std::max(1.0, ride_along->front()));
  const double norm =
      optimizer_.clip_gradients(settings_.grad_clip > 0 ? settings_.grad_clip : HUGE_VAL, gradient_norm());
  const double lr = settings_.lr_at(steps_);
  if (std::isfinite(norm)) optimizer_.step(lr);  // a non-finite gradient is skipped, not applied
  optimizer_.zero_grad();
  ++steps_;
  return {norm, lr};
}

std::map<std::string, torch::Tensor> TrainState::state() const {
  return {{"exp_avg", optimizer_.exp_avg()},
          {"exp_avg_sq", optimizer_.exp_avg_sq()},
          {"adam_steps", torch::full({}, optimizer_.steps(), torch::kInt64)},
          {"schedule_steps", torch::full({}, steps_, torch::kInt64)}};
}

void TrainState::restore(const std::map<std::string, torch::Tensor>& state) {
  optimizer_.restore(state.at("exp_avg").to(optimizer_.exp_avg().device()),
                     state.at("exp_avg_sq").to(optimizer_.exp_avg_sq().device()),
                     state.at("adam_steps").item<int64_t>());
  steps_ = state.at("schedule_steps").item<int64_t>();
}

double all_reduce_sum(WorkerEnv& env, double value) {
  if (data_parallel_size(env) <= 1) return value;
  auto t = torch::tensor({value}, torch::kFloat64);
  data_parallel_group(env).all_reduce_sum(t);
  return t.item<double>();
}

void broadcast_parameters(model::Transformer& model, WorkerEnv& env) {
  if (env.world <= 1) return;
  torch::NoGradGuard no_grad;
  for (auto& p : model->parameters()) {
    torch::Tensor t = p.detach().contiguous();
    env.spmd().broadcast(t, 0);
    p.copy_(t);
  }
}

int64_t local_mini_batch_rows(const core::config::PpoOptions& ppo, int64_t rows, const WorkerEnv& env) {
  const int64_t global = ppo.mini_batch_size;
  return global > 0 ? std::max<int64_t>(1, global / data_parallel_size(env)) : rows;
}

double LossCounts::count(core::algorithms::LossAggMode mode) const {
  return mode == core::algorithms::LossAggMode::kTokenMean ? tokens : sequences;
}

LossCounts loss_counts(const torch::Tensor& response_mask) {
  auto mask = response_mask.to(torch::kFloat64);
  return {mask.sum().item<double>(), (mask.sum(1) > 0).sum().item<double>()};
}

LossCounts global_counts(WorkerEnv& env, const torch::Tensor& response_mask) {
  LossCounts local = loss_counts(response_mask);
  if (data_parallel_size(env) <= 1) return local;
  auto both = torch::tensor({local.tokens, local.sequences}, torch::kFloat64);
  data_parallel_group(env).all_reduce_sum(both);
  auto values = both.accessor<double, 1>();
  return {values[0], values[1]};
}

nlohmann::json sum_metrics_over_ranks(WorkerEnv& env, const std::map<std::string, double>& sums,
                                      double updates) {
  nlohmann::json out = nlohmann::json::object();
  if (sums.empty()) return out;
  std::vector<double> values;
  for (auto& [k, v] : sums) values.push_back(v);
  auto t = torch::tensor(values, torch::kFloat64);
  if (data_parallel_size(env) > 1) data_parallel_group(env).all_reduce_sum(t);
  auto reduced = t.accessor<double, 1>();
  size_t i = 0;
  for (auto& [k, v] : sums) out[k] = reduced[static_cast<int64_t>(i++)] / std::max(1.0, updates);
  return out;
}

std::vector<std::pair<int64_t, int64_t>> row_ranges(int64_t rows, int64_t size) {
  std::vector<std::pair<int64_t, int64_t>> ranges;
  if (size <= 0) size = rows;
  for (int64_t b = 0; b < rows; b += size) ranges.emplace_back(b, std::min(rows, b + size));
  return ranges;
}

std::vector<int64_t> prompt_token_ids(const model::Tokenizer& tokenizer, const nlohmann::json& prompt,
                                      const model::ChatTemplate* chat_template, const std::string& refused) {
  if (prompt.is_array()) {
    if (chat_template == nullptr && !refused.empty()) {
      throw RoleConfigError(
          "a prompt is a list of chat messages but the tokenizer's chat template cannot be "
          "rendered: " +
          refused);
    }
    if (chat_template == nullptr) {
      throw RoleConfigError(
          "a prompt is a list of chat messages but the tokenizer has no chat template "
          "(chat_template in tokenizer_config.json or chat_template.jinja next to "
          "tokenizer.json)");
    }
    return tokenizer.encode(
        chat_template->render(nlohmann::ordered_json(prompt), /*add_generation_prompt=*/true));
  }
  std::vector<int64_t> tokens;
  if (tokenizer.special_ids().bos >= 0) tokens.push_back(tokenizer.special_ids().bos);
  auto body = tokenizer.encode(prompt.is_string() ? prompt.get<std::string>() : prompt.dump());
  tokens.insert(tokens.end(), body.begin(), body.end());
  return tokens;
}

PromptIds tokenize_prompts(const model::Tokenizer& tokenizer, const std::vector<nlohmann::json>& prompts,
                           const model::ChatTemplate* chat_template, const std::string& refused) {
  std::vector<std::vector<int64_t>> lists;
  for (const auto& p : prompts) lists.push_back(prompt_token_ids(tokenizer, p, chat_template, refused));
  const auto& ids = tokenizer.special_ids();
  auto padded = model::left_pad(lists, ids.pad >= 0 ? ids.pad : 0);
  return {padded.ids, padded.mask};
}

std::vector<nlohmann::json> decode_responses(const model::Tokenizer& tokenizer,
                                             const torch::Tensor& responses,
                                             const torch::Tensor& response_mask) {
  std::vector<nlohmann::json> texts;
  auto r = responses.to(torch::kCPU, torch::kInt64).contiguous();
  auto m = response_mask.to(torch::kCPU, torch::kInt64).contiguous();
  auto rs = r.accessor<int64_t, 2>();
  auto ms = m.accessor<int64_t, 2>();
  const int64_t eos = tokenizer.special_ids().eos;
  for (int64_t i = 0; i < r.size(0); ++i) {
    std::vector<int64_t> ids;
    for (int64_t j = 0; j < r.size(1); ++j) {
      if (!ms[i][j]) break;
      int64_t id = rs[i][j];
      if (id == eos) break;
      ids.push_back(id);
    }
    texts.push_back(tokenizer.decode(ids, /*skip_special_tokens=*/true));
  }
  return texts;
}

void save_checkpoint(model::Transformer& model, const nlohmann::json& tokenizer_config,
                     const std::string& dir) {
  model::save_hf_checkpoint(model, dir);
  // RLWB's own note of the tokenizer, so `checkpoint: DIR` finds it again.
  std::ofstream(fs::path(dir) / "rlwb_tokenizer.json") << tokenizer_config.dump(2) << "\n";
}

model::Transformer load_checkpoint_for(const std::string& dir, model::Head head, int64_t seed) {
  torch::manual_seed(seed);  // a fresh value head is the same on every rank
  model::LoadOptions options;
  options.head = head;
  return model::load_hf_checkpoint(dir, options);
}

}  // namespace rlwb::workers::roles
