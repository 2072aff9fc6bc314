#include "workers/model/transformer_config.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": " + what);
}

// A required positive integer setting.
int64_t positive_int(const Json& j, const char* key, const std::string& source) {
  if (!j.contains(key)) fail(source, std::string("missing setting '") + key + "'");
  const Json& v = j.at(key);
  if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
    fail(source, std::string("setting '") + key + "' must be a positive integer, got " + v.dump());
  }
  return v.get<int64_t>();
}

template <typename T>
T optional_value(const Json& j, const char* key, T fallback, const std::string& source) {
  if (!j.contains(key) || j.at(key).is_null()) return fallback;
  try {
    return j.at(key).get<T>();
  } catch (const Json::exception&) {
    fail(source, std::string("setting '") + key + "' has the wrong type: " + j.at(key).dump());
  }
}

// eos_token_id may be an int, a list of ints (first one wins) or null.
int64_t token_id(const Json& j, const char* key, const std::string& source) {
  if (!j.contains(key) || j.at(key).is_null()) return -1;
  const Json& v = j.at(key);
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_array() && !v.empty() && v.at(0).is_number_integer()) return v.at(0).get<int64_t>();
  fail(source, std::string("setting '") + key + "' must be a token id, got " + v.dump());
}

void read_rope(const Json& j, TransformerConfig& c, const std::string& source) {
  // transformers 5: "rope_parameters"; transformers 4: "rope_theta" + "rope_scaling".
  Json params = Json::object();
  if (j.contains("rope_parameters") && j.at("rope_parameters").is_object()) {
    params = j.at("rope_parameters");
  } else if (j.contains("rope_scaling") && j.at("rope_scaling").is_object()) {
    params = j.at("rope_scaling");
  }
  c.rope_theta = optional_value<double>(j, "rope_theta", 10000.0, source);
  c.rope_theta = optional_value<double>(params, "rope_theta", c.rope_theta, source);
  std::string type = optional_value<std::string>(params, "type", "default", source);
  type = optional_value<std::string>(params, "rope_type", type, source);
  if (type != "default" && type != "linear" && type != "llama3") {
    fail(source, "rope type '" + type + "' is not supported (supported: default, linear, llama3)");
  }
  c.rope_scaling.type = type;
  c.rope_scaling.factor = optional_value<double>(params, "factor", 1.0, source);
  c.rope_scaling.low_freq_factor = optional_value<double>(params, "low_freq_factor", 1.0, source);
  c.rope_scaling.high_freq_factor = optional_value<double>(params, "high_freq_factor", 4.0, source);
  c.rope_scaling.original_max_position_embeddings =
      optional_value<int64_t>(params, "original_max_position_embeddings", 8192, source);
  if (c.rope_theta <= 0) fail(source, "setting 'rope_theta' must be positive");
  if (type != "default" && c.rope_scaling.factor <= 0) fail(source, "rope 'factor' must be positive");
}

struct KnownArchitecture {
  const char* name;
  Architecture architecture;
  Head head;
};
constexpr KnownArchitecture kKnown[] = {
    {"LlamaForCausalLM", Architecture::kLlama, Head::kLanguageModel},
    {"Qwen2ForCausalLM", Architecture::kQwen2, Head::kLanguageModel},
    {"LlamaForSequenceClassification", Architecture::kLlama, Head::kValue},
    {"Qwen2ForSequenceClassification", Architecture::kQwen2, Head::kValue},
};

std::string known_list() {
  std::string out;
  for (const auto& k : kKnown) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

}  // namespace

void TransformerConfig::validate(const std::string& source) const {
  auto positive = [&](int64_t v, const char* key) {
    if (v <= 0) fail(source, std::string("setting '") + key + "' must be positive, got " + std::to_string(v));
  };
  positive(vocab_size, "vocab_size");
  positive(hidden_size, "hidden_size");
  positive(intermediate_size, "intermediate_size");
  positive(num_layers, "num_hidden_layers");
  positive(num_heads, "num_attention_heads");
  positive(num_kv_heads, "num_key_value_heads");
  positive(max_position_embeddings, "max_position_embeddings");
  if (num_heads % num_kv_heads != 0) {
    fail(source, "num_attention_heads (" + std::to_string(num_heads) +
                     ") must be a multiple of num_key_value_heads (" + std::to_string(num_kv_heads) + ")");
  }
  if (head_dim <= 0 && hidden_size % num_heads != 0) {
    fail(source, "hidden_size (" + std::to_string(hidden_size) + ") must divide by num_attention_heads (" +
                     std::to_string(num_heads) + ") when 'head_dim' is not set");
  }
  if (resolved_head_dim() % 2 != 0) {
    fail(source, "head_dim must be even for rotary embeddings, got " + std::to_string(resolved_head_dim()));
  }
  if (!(rms_norm_eps > 0)) fail(source, "setting 'rms_norm_eps' must be positive");
  if (!(rope_theta > 0)) fail(source, "setting 'rope_theta' must be positive");
}

std::string hf_architecture_name(Architecture architecture, Head head) {
  for (const auto& k : kKnown) {
    if (k.architecture == architecture && k.head == head) return k.name;
  }
  return "?";
}

std::string hf_model_type(Architecture architecture) {
  return architecture == Architecture::kQwen2 ? "qwen2" : "llama";
}

TransformerConfig parse_hf_config(const std::string& json_text, const std::string& source) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::exception& e) {
    fail(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.is_object()) fail(source, "expected a JSON object");

  TransformerConfig c;
  std::string arch_name;
  if (j.contains("architectures") && j.at("architectures").is_array() && !j.at("architectures").empty()) {
    arch_name = j.at("architectures").at(0).get<std::string>();
  } else if (j.contains("model_type")) {
    std::string type = j.at("model_type").get<std::string>();
    arch_name = type == "llama"   ? "LlamaForCausalLM"
                : type == "qwen2" ? "Qwen2ForCausalLM"
                                  : "model_type " + type;
  } else {
    fail(source, "missing setting 'architectures' (and no 'model_type')");
  }
  bool known = false;
  for (const auto& k : kKnown) {
    if (arch_name == k.name) {
      c.architecture = k.architecture;
      c.head = k.head;
      known = true;
    }
  }
  if (!known) {
    fail(source, "architecture '" + arch_name + "' is not supported (supported: " + known_list() + ")");
  }

  c.vocab_size = positive_int(j, "vocab_size", source);
  c.hidden_size = positive_int(j, "hidden_size", source);
  c.intermediate_size = positive_int(j, "intermediate_size", source);
  c.num_layers = positive_int(j, "num_hidden_layers", source);
  c.num_heads = positive_int(j, "num_attention_heads", source);
  c.num_kv_heads = j.contains("num_key_value_heads") && !j.at("num_key_value_heads").is_null()
                       ? positive_int(j, "num_key_value_heads", source)
                       : c.num_heads;
  c.head_dim = optional_value<int64_t>(j, "head_dim", 0, source);
  c.max_position_embeddings = optional_value<int64_t>(j, "max_position_embeddings", 2048, source);
  c.rms_norm_eps = optional_value<double>(j, "rms_norm_eps", 1e-6, source);
  c.initializer_range = optional_value<double>(j, "initializer_range", 0.02, source);
  c.tie_word_embeddings = optional_value<bool>(j, "tie_word_embeddings", false, source);
  read_rope(j, c, source);

  std::string act = optional_value<std::string>(j, "hidden_act", "silu", source);
  if (act != "silu") fail(source, "setting 'hidden_act' is '" + act + "'; only 'silu' (SwiGLU) is supported");

  if (c.architecture == Architecture::kQwen2) {
    c.qkv_bias = true;
    if (optional_value<bool>(j, "use_sliding_window", false, source)) {
      fail(source, "setting 'use_sliding_window' is true; sliding-window attention is not supported");
    }
  } else {
    bool attention_bias = optional_value<bool>(j, "attention_bias", false, source);
    c.qkv_bias = attention_bias;
    c.output_bias = attention_bias;
    c.mlp_bias = optional_value<bool>(j, "mlp_bias", false, source);
  }
  if (c.head == Head::kValue) {
    int64_t labels = j.contains("id2label") && j.at("id2label").is_object()
                         ? static_cast<int64_t>(j.at("id2label").size())
                         : optional_value<int64_t>(j, "num_labels", 1, source);
    if (labels != 1) {
      fail(source,
           "a value model needs exactly one label (num_labels/id2label), got " + std::to_string(labels));
    }
  }
  c.bos_token_id = token_id(j, "bos_token_id", source);
  c.eos_token_id = token_id(j, "eos_token_id", source);
  c.pad_token_id = token_id(j, "pad_token_id", source);
  c.validate(source);
  return c;
}

TransformerConfig read_hf_config(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) {
    throw ModelError(path.string() + ": cannot open (a checkpoint directory needs config.json)");
  }
  std::stringstream text;
  text << in.rdbuf();
  return parse_hf_config(text.str(), path.string());
}

std::string hf_config_json(const TransformerConfig& c, const std::string& dtype) {
  Json j;
  j["architectures"] = Json::array({hf_architecture_name(c.architecture, c.head)});
  j["model_type"] = hf_model_type(c.architecture);
  j["vocab_size"] = c.vocab_size;
  j["hidden_size"] = c.hidden_size;
  j["intermediate_size"] = c.intermediate_size;
  j["num_hidden_layers"] = c.num_layers;
  j["num_attention_heads"] = c.num_heads;
  j["num_key_value_heads"] = c.num_kv_heads;
  j["head_dim"] = c.resolved_head_dim();
  j["max_position_embeddings"] = c.max_position_embeddings;
  j["rms_norm_eps"] = c.rms_norm_eps;
  j["hidden_act"] = "silu";
  j["initializer_range"] = c.initializer_range;
  j["tie_word_embeddings"] = c.tie_word_embeddings;
  j["attention_dropout"] = 0.0;
  j["use_cache"] = true;
  j["dtype"] = dtype;
  j["torch_dtype"] = dtype;

  Json rope = {{"rope_type", c.rope_scaling.type}, {"rope_theta", c.rope_theta}};
  if (c.rope_scaling.type != "default") {
    rope["factor"] = c.rope_scaling.factor;
    if (c.rope_scaling.type == "llama3") {
      rope["low_freq_factor"] = c.rope_scaling.low_freq_factor;
      rope["high_freq_factor"] = c.rope_scaling.high_freq_factor;
      rope["original_max_position_embeddings"] = c.rope_scaling.original_max_position_embeddings;
    }
    Json scaling = rope;
    scaling.erase("rope_theta");
    scaling["type"] = c.rope_scaling.type;
    j["rope_scaling"] = scaling;  // transformers 4
  }
  j["rope_parameters"] = rope;  // transformers 5
  j["rope_theta"] = c.rope_theta;

  if (c.architecture == Architecture::kQwen2) {
    j["use_sliding_window"] = false;
    j["sliding_window"] = nullptr;
    j["max_window_layers"] = c.num_layers;
  } else {
    j["attention_bias"] = c.qkv_bias;
    j["mlp_bias"] = c.mlp_bias;
  }
  if (c.head == Head::kValue) {
    j["num_labels"] = 1;
    j["id2label"] = {{"0", "LABEL_0"}};
    j["label2id"] = {{"LABEL_0", 0}};
  }
  auto id_or_null = [](int64_t id) { return id >= 0 ? Json(id) : Json(nullptr); };
  j["bos_token_id"] = id_or_null(c.bos_token_id);
  j["eos_token_id"] = id_or_null(c.eos_token_id);
  j["pad_token_id"] = id_or_null(c.pad_token_id);
  return j.dump(2) + "\n";
}

}  // namespace rlwb::workers::model
