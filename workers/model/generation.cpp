#include "workers/model/generation.h"

#include <torch/torch.h>

#include <algorithm>

#include "workers/model/layers.h"
#include "workers/model/model_error.h"
#include "workers/model/shared_prompts.h"
#include "workers/model/vocab_parallel.h"

namespace rlwb::workers::model {
namespace {

at::Generator seeded_generator(const torch::Device& device, uint64_t seed) {
  at::Generator generator = at::globalContext().defaultGenerator(device).clone();
  std::lock_guard<std::mutex> lock(generator.mutex());
  generator.set_current_seed(seed);
  return generator;
}

int64_t resolve_pad(const GenerationOptions& o, const TransformerConfig& c) {
  if (o.pad_token_id >= 0) return o.pad_token_id;
  if (c.pad_token_id >= 0) return c.pad_token_id;
  if (c.eos_token_id >= 0) return c.eos_token_id;
  return 0;
}

void check_inputs(const TransformerConfig& c, const torch::Tensor& ids, const torch::Tensor& mask,
                  const GenerationOptions& o) {
  validate(o.sampling);
  if (ids.dim() != 2 || mask.sizes() != ids.sizes()) {
    throw ModelError("generate: prompt ids and mask must both be [batch, length]");
  }
  if (o.max_new_tokens <= 0) {
    throw ModelError("generate: 'max_new_tokens' must be positive, got " + std::to_string(o.max_new_tokens));
  }
  const int64_t prompt_len = ids.size(1);
  const std::string context =
      " the context (setting 'max_position_embeddings' = " + std::to_string(c.max_position_embeddings) + ")";
  if (prompt_len > c.max_position_embeddings) {
    throw ModelError("generate: a prompt of " + std::to_string(prompt_len) + " tokens is longer than" +
                     context);
  }
  if (prompt_len + o.max_new_tokens > c.max_position_embeddings) {
    throw ModelError("generate: a prompt of " + std::to_string(prompt_len) + " tokens + 'max_new_tokens' " +
                     std::to_string(o.max_new_tokens) + " exceeds" + context);
  }
  if (ids.size(0) > 0 && (mask.sum(1) == 0).any().item<bool>()) {
    throw ModelError("generate: every prompt needs at least one token (a row of prompt_mask is all 0)");
  }
  if (ids.numel() > 0 && (ids.min().item<int64_t>() < 0 || ids.max().item<int64_t>() >= c.vocab_size)) {
    throw ModelError("generate: a prompt token id is outside the vocabulary (setting 'vocab_size' = " +
                     std::to_string(c.vocab_size) + ")");
  }
}

}  // namespace

GenerationResult generate(Transformer& model, const torch::Tensor& prompt_ids,
                          const torch::Tensor& prompt_mask, const GenerationOptions& options) {
  const TransformerConfig& config = model->config();
  check_inputs(config, prompt_ids, prompt_mask, options);
  c10::InferenceMode inference;

  const torch::Tensor& any_parameter = model->tok_embeddings->weight;
  const torch::Device device = any_parameter.device();
  const int64_t batch = prompt_ids.size(0), prompt_len = prompt_ids.size(1);
  const int64_t max_new = options.max_new_tokens;
  const int64_t pad = resolve_pad(options, config);
  std::vector<int64_t> stops = options.stop_token_ids;
  if (stops.empty() && config.eos_token_id >= 0) stops.push_back(config.eos_token_id);
  auto i64 = torch::TensorOptions().dtype(torch::kInt64).device(device);
  torch::Tensor stop_ids = torch::tensor(stops, torch::kInt64).to(device);
  at::Generator generator = seeded_generator(device, options.seed);
  // The ranks the vocabulary is split over sample alike from `generator`;
  // each draws the noise of its own vocabulary columns from one seeded apart.
  const TensorParallel& vocab = model->vocab_parallel();
  at::Generator own_noise = seeded_generator(device, options.seed * 1000003 + 7919 * (vocab.rank + 1));
  auto sample = [&](const torch::Tensor& local_logits) {
    return sample_vocab_parallel(local_logits, model->vocab_shard(), config.vocab_size, vocab,
                                 options.sampling, generator, own_noise);
  };

  GenerationResult result;
  result.responses = torch::full({batch, max_new}, pad, i64);
  result.response_mask = torch::zeros({batch, max_new}, i64);
  result.log_probs =
      torch::zeros({batch, max_new}, torch::TensorOptions().dtype(torch::kFloat32).device(device));
  if (batch == 0) {
    result.response_lengths = torch::zeros({0}, i64);
    return result;
  }

  // Live rows: `rows` maps them to result rows; cache, key_mask and
  // positions hold live rows only.
  torch::Tensor key_mask = torch::zeros({batch, prompt_len + max_new}, i64);
  key_mask.narrow(1, 0, prompt_len).copy_(prompt_mask);
  torch::Tensor prompt_positions = position_ids_from_mask(prompt_mask.to(device));
  torch::Tensor next_position = prompt_positions.select(1, prompt_len - 1) + 1;
  torch::Tensor rows = torch::arange(batch, i64);
  // Without padding no step needs a mask: pass none and save building one.
  const bool padded = !prompt_mask.to(torch::kBool).all().item<bool>();
  auto keys_so_far = [&](int64_t n) { return padded ? key_mask.narrow(1, 0, n) : torch::Tensor(); };

  // Prefill. Rows that share a prompt (n samples of it) run it once and
  // copy its cache (shared_prompts.h).
  const auto shared = prompts_worth_sharing(prompt_ids.to(device), prompt_mask.to(device));
  KVCache cache(model->shard_config(), shared ? shared->count() : batch, prompt_len + max_new,
                any_parameter.options());
  torch::Tensor hidden =
      shared ? model->hidden_states(shared->ids, position_ids_from_mask(shared->mask),
                                    padded ? shared->mask : torch::Tensor(), &cache, prompt_len - 1)
             : model->hidden_states(prompt_ids.to(device), prompt_positions, keys_so_far(prompt_len), &cache,
                                    prompt_len - 1);
  torch::Tensor logits = model->logits(hidden.select(1, 0));  // the last prompt position's
  if (shared) {
    cache.keep_rows(shared->prompt_of);
    logits = logits.index_select(0, shared->prompt_of);
  }

  torch::Tensor finished = torch::zeros({batch}, i64.dtype(torch::kBool));
  int64_t n_finished = 0;  // rows in the batch that have stopped
  for (int64_t step = 0; step < max_new; ++step) {
    NextTokens next = sample(logits);
    torch::Tensor tokens = next.tokens;
    torch::Tensor log_probs = next.log_probs;
    torch::Tensor live_mask;
    if (n_finished > 0) {  // rows that stopped but are still in the batch write pad / 0 / 0
      tokens = tokens.masked_fill(finished, pad);
      log_probs = log_probs.masked_fill(finished, 0.0);
      live_mask = finished.logical_not().to(torch::kInt64);
    }
    if (rows.size(0) == batch) {  // nothing dropped yet: rows are 0..B-1
      result.responses.select(1, step).copy_(tokens);
      result.log_probs.select(1, step).copy_(log_probs);
      live_mask.defined() ? result.response_mask.select(1, step).copy_(live_mask)
                          : result.response_mask.select(1, step).fill_(1);
    } else {
      result.responses.select(1, step).index_copy_(0, rows, tokens);
      result.log_probs.select(1, step).index_copy_(0, rows, log_probs);
      live_mask.defined() ? result.response_mask.select(1, step).index_copy_(0, rows, live_mask)
                          : result.response_mask.select(1, step).index_fill_(0, rows, 1);
    }
    if (step + 1 == max_new) break;

    if (stop_ids.numel() > 0) {
      finished = finished.logical_or(torch::isin(tokens, stop_ids));
      n_finished = finished.sum().item<int64_t>();
    }
    const int64_t live = rows.size(0);
    if (n_finished == live) break;
    if (n_finished * 4 >= live && n_finished > 0) {
      // Finished rows still cost a step each; drop them (and their cache rows).
      torch::Tensor keep = torch::nonzero(finished.logical_not()).squeeze(1);
      cache.keep_rows(keep);
      key_mask = key_mask.index_select(0, keep);
      next_position = next_position.index_select(0, keep);
      tokens = tokens.index_select(0, keep);
      rows = rows.index_select(0, keep);
      finished = finished.index_select(0, keep);
      n_finished = 0;
    }
    if (padded) key_mask.select(1, prompt_len + step).fill_(1);
    hidden = model->hidden_states(tokens.view({-1, 1}), next_position.view({-1, 1}),
                                  keys_so_far(prompt_len + step + 1), &cache);
    logits = model->logits(hidden.select(1, 0));
    next_position.add_(1);
  }
  result.response_lengths = result.response_mask.sum(1);
  return result;
}

PaddedPrompts left_pad(const std::vector<std::vector<int64_t>>& prompts, int64_t pad_token_id) {
  int64_t width = 0;
  for (const auto& p : prompts) width = std::max<int64_t>(width, static_cast<int64_t>(p.size()));
  const int64_t batch = static_cast<int64_t>(prompts.size());
  PaddedPrompts out{torch::full({batch, width}, pad_token_id, torch::kInt64),
                    torch::zeros({batch, width}, torch::kInt64)};
  auto ids = out.ids.accessor<int64_t, 2>();
  auto mask = out.mask.accessor<int64_t, 2>();
  for (int64_t b = 0; b < batch; ++b) {
    const auto& p = prompts[b];
    const int64_t offset = width - static_cast<int64_t>(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      ids[b][offset + static_cast<int64_t>(i)] = p[i];
      mask[b][offset + static_cast<int64_t>(i)] = 1;
    }
  }
  return out;
}

}  // namespace rlwb::workers::model
