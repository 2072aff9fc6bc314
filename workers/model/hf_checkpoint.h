// Hugging Face checkpoints: a directory with config.json and
// model.safetensors (or sharded: model.safetensors.index.json naming
// model-0000k-of-0000n.safetensors files). Loading accepts Llama and Qwen2
// causal-LM and sequence-classification (value head) checkpoints; saving
// writes a directory that transformers' AutoModelFor*.from_pretrained loads.
// Used by the roles (initial weights, exporting the trained actor) and by
// the tests against Python.
//
// Tensor names: RLWB's parameters map one to one to HF's
//   tok_embeddings.weight        <-> model.embed_tokens.weight
//   layers.i.attn_norm.weight    <-> model.layers.i.input_layernorm.weight
//   layers.i.w{q,k,v,o}.*        <-> model.layers.i.self_attn.{q,k,v,o}_proj.*
//   layers.i.ffn_norm.weight     <-> model.layers.i.post_attention_layernorm.weight
//   layers.i.ffn_{gate,up,down}.* <-> model.layers.i.mlp.{gate,up,down}_proj.*
//   norm.weight                  <-> model.norm.weight
//   lm_head.weight / score.weight <-> the same
#pragma once

#include <torch/types.h>

#include <filesystem>
#include <optional>
#include <string>

#include "workers/model/transformer.h"

namespace rlwb::workers::model {

struct LoadOptions {
  torch::Dtype dtype = torch::kFloat32;  // parameters are converted to this
  torch::Device device = torch::kCPU;
  // Overrides the head the checkpoint has. Head::kValue on a causal-LM
  // checkpoint builds a critic/reward model from an actor: the backbone is
  // loaded, lm_head is skipped and the value head starts from
  // normal(0, initializer_range) drawn from torch's global generator.
  std::optional<Head> head;
};

// Throws ModelError naming the file and the tensor or setting: no
// config.json / no safetensors file, unknown architecture, a tensor the
// config needs that the checkpoint lacks, a tensor whose shape disagrees
// with the config, a tensor the config does not explain (e.g. more layers
// than num_hidden_layers), a malformed safetensors file.
Transformer load_hf_checkpoint(const std::filesystem::path& dir, const LoadOptions& options = {});

struct SaveOptions {
  torch::Dtype dtype = torch::kFloat32;  // float32, bfloat16 or float16
};

// Writes config.json and model.safetensors into dir (created if needed;
// existing files of those names are replaced).
void save_hf_checkpoint(Transformer& model, const std::filesystem::path& dir,
                        const SaveOptions& options = {});

// RLWB parameter name -> HF tensor name (see the table above).
std::string hf_tensor_name(const std::string& rlwb_name);

}  // namespace rlwb::workers::model
