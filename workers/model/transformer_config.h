// TransformerConfig: the shape of a decoder-only transformer of the
// Llama/Qwen2 family, and its translation to and from a Hugging Face
// config.json. Used by Transformer (workers/model/transformer.h), the
// checkpoint loader/saver (hf_checkpoint.h) and the roles that build models
// from an experiment file.
//
// Both config.json dialects are read: transformers 5 ("rope_parameters":
// {"rope_theta", "rope_type", ...}) and 4 ("rope_theta" + "rope_scaling").
// Both are written, so either version reads an exported checkpoint.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace rlwb::workers::model {

enum class Architecture { kLlama, kQwen2 };

// What sits on top of the final norm.
//   kLanguageModel: lm_head, Linear(hidden, vocab) (or the tied embedding):
//                   actor and reference. HF: *ForCausalLM.
//   kValue:         score, Linear(hidden, 1, no bias): critic, reward and
//                   cost models. HF: *ForSequenceClassification, num_labels=1.
enum class Head { kLanguageModel, kValue };

// Rotary embedding frequency rescaling (HF "rope_type"/"rope_scaling").
struct RopeScaling {
  std::string type = "default";                     // "default", "linear" or "llama3"
  double factor = 1.0;                              // linear, llama3
  double low_freq_factor = 1.0;                     // llama3
  double high_freq_factor = 4.0;                    // llama3
  int64_t original_max_position_embeddings = 8192;  // llama3
};

struct TransformerConfig {
  Architecture architecture = Architecture::kLlama;
  Head head = Head::kLanguageModel;

  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // SwiGLU inner width
  int64_t num_layers = 0;
  int64_t num_heads = 0;                   // query heads
  int64_t num_kv_heads = 0;                // key/value heads (GQA); divides num_heads
  int64_t head_dim = 0;                    // 0: hidden_size / num_heads
  int64_t max_position_embeddings = 2048;  // the context length

  double rope_theta = 10000.0;
  RopeScaling rope_scaling;
  double rms_norm_eps = 1e-6;

  bool tie_word_embeddings = false;  // lm_head shares tok_embeddings' weight
  bool qkv_bias = false;             // bias on wq, wk, wv (Qwen2: always)
  bool output_bias = false;          // bias on wo (Llama attention_bias)
  bool mlp_bias = false;             // bias on ffn_gate, ffn_up, ffn_down

  // Special token ids from config.json; -1 when it has none.
  int64_t bos_token_id = -1;
  int64_t eos_token_id = -1;
  int64_t pad_token_id = -1;

  double initializer_range = 0.02;  // std of the random init

  int64_t resolved_head_dim() const { return head_dim > 0 ? head_dim : hidden_size / num_heads; }

  // Throws ModelError "<source>: <setting> ..." for a shape that cannot be
  // built (zero sizes, num_heads not a multiple of num_kv_heads, ...).
  void validate(const std::string& source) const;
};

// The HF names: "LlamaForCausalLM", "Qwen2ForSequenceClassification", ...
std::string hf_architecture_name(Architecture architecture, Head head);
std::string hf_model_type(Architecture architecture);

// Reads <path> (a config.json). Throws ModelError naming the file and the
// setting for a missing or malformed key, an architecture other than
// Llama/Qwen2, an activation other than silu, a rope type other than
// default/linear/llama3, or sliding-window attention.
TransformerConfig read_hf_config(const std::filesystem::path& path);

// Parses config.json text; `source` names it in errors.
TransformerConfig parse_hf_config(const std::string& json_text, const std::string& source);

// The config.json text HF transformers (4.x and 5.x) loads back.
// `dtype` is the torch dtype name written as "dtype"/"torch_dtype".
std::string hf_config_json(const TransformerConfig& config, const std::string& dtype = "float32");

}  // namespace rlwb::workers::model
