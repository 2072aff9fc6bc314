#include "workers/model/hf_checkpoint.h"

#include <torch/torch.h>

#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "workers/model/model_error.h"
#include "workers/model/safetensors.h"

namespace rlwb::workers::model {
namespace {

namespace fs = std::filesystem;

// Layer-local renames: RLWB name -> HF name (after "layers.i.").
constexpr std::pair<const char*, const char*> kLayerNames[] = {
    {"attn_norm.", "input_layernorm."}, {"wq.", "self_attn.q_proj."},
    {"wk.", "self_attn.k_proj."},       {"wv.", "self_attn.v_proj."},
    {"wo.", "self_attn.o_proj."},       {"ffn_norm.", "post_attention_layernorm."},
    {"ffn_gate.", "mlp.gate_proj."},    {"ffn_up.", "mlp.up_proj."},
    {"ffn_down.", "mlp.down_proj."},
};

std::string shape_text(at::IntArrayRef shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) out += (i ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Every tensor of a checkpoint, by HF name, over one file or a sharded set.
class CheckpointTensors {
 public:
  explicit CheckpointTensors(const fs::path& dir) {
    const fs::path single = dir / "model.safetensors";
    const fs::path index = dir / "model.safetensors.index.json";
    if (fs::exists(single)) {
      add_file(single);
      for (const auto& name : readers_.back()->names()) owner_[name] = readers_.back().get();
    } else if (fs::exists(index)) {
      read_index(dir, index);
    } else {
      throw ModelError(dir.string() +
                       ": no model.safetensors or model.safetensors.index.json in the checkpoint");
    }
  }

  bool contains(const std::string& name) const { return owner_.count(name) > 0; }
  const SafetensorsReader& file_of(const std::string& name) const { return *owner_.at(name); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& [name, reader] : owner_) out.push_back(name);
    return out;
  }
  // The file a missing tensor would be looked for in (for messages).
  std::string where() const { return described_; }

 private:
  void add_file(const fs::path& path) {
    readers_.push_back(std::make_unique<SafetensorsReader>(path));
    described_ = path.string();
  }

  void read_index(const fs::path& dir, const fs::path& index) {
    std::ifstream in(index);
    nlohmann::json j;
    try {
      in >> j;
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(index.string() + ": not valid JSON: " + e.what());
    }
    if (!j.contains("weight_map") || !j.at("weight_map").is_object()) {
      throw ModelError(index.string() + ": missing 'weight_map'");
    }
    std::map<std::string, SafetensorsReader*> by_file;
    for (const auto& [name, file] : j.at("weight_map").items()) {
      const std::string f = file.get<std::string>();
      if (!by_file.count(f)) {
        add_file(dir / f);
        by_file[f] = readers_.back().get();
      }
      if (!by_file[f]->contains(name)) {
        throw ModelError((dir / f).string() + ": has no tensor '" + name + "' (the index " + index.string() +
                         " says it is there)");
      }
      owner_[name] = by_file[f];
    }
    described_ = index.string();
  }

  std::vector<std::unique_ptr<SafetensorsReader>> readers_;
  std::map<std::string, SafetensorsReader*> owner_;
  std::string described_;
};

bool ignorable(const std::string& hf_name, const TransformerConfig& c) {
  if (hf_name.ends_with("rotary_emb.inv_freq")) return true;  // old checkpoints store a derived buffer
  if (hf_name == "lm_head.weight") return c.tie_word_embeddings || c.head == Head::kValue;
  return false;
}

std::string torch_dtype_name(torch::Dtype dtype) {
  switch (dtype) {
    case torch::kFloat32:
      return "float32";
    case torch::kBFloat16:
      return "bfloat16";
    case torch::kFloat16:
      return "float16";
    default:
      throw ModelError(std::string("save_hf_checkpoint: dtype ") + c10::toString(dtype) +
                       " is not a checkpoint dtype (float32, bfloat16, float16)");
  }
}

}  // namespace

std::string hf_tensor_name(const std::string& name) {
  if (name == "tok_embeddings.weight") return "model.embed_tokens.weight";
  if (name == "norm.weight") return "model.norm.weight";
  if (name.starts_with("layers.")) {
    const size_t dot = name.find('.', 7);
    const std::string prefix = name.substr(0, dot + 1);  // "layers.i."
    const std::string rest = name.substr(dot + 1);
    for (const auto& [ours, theirs] : kLayerNames) {
      if (rest.starts_with(ours)) return "model." + prefix + theirs + rest.substr(std::strlen(ours));
    }
  }
  return name;  // lm_head.weight, score.weight
}

Transformer load_hf_checkpoint(const fs::path& dir, const LoadOptions& options) {
  if (!fs::is_directory(dir))
    throw ModelError(dir.string() + ": not a checkpoint directory (it does not exist)");
  const fs::path config_path = dir / "config.json";
  TransformerConfig config = read_hf_config(config_path);
  const Head stored_head = config.head;
  if (options.head) config.head = *options.head;
  const bool fresh_value_head = config.head == Head::kValue && stored_head == Head::kLanguageModel;
  if (config.head == Head::kLanguageModel && stored_head == Head::kValue) {
    throw ModelError(config_path.string() + ": the checkpoint is a value model (" +
                     hf_architecture_name(config.architecture, stored_head) +
                     "); it has no language-model head to load");
  }
  CheckpointTensors tensors(dir);

  Transformer model(config);
  std::set<std::string> used;
  {
    torch::NoGradGuard no_grad;
    for (auto& item : model->named_parameters()) {
      const std::string hf_name = hf_tensor_name(item.key());
      torch::Tensor& param = item.value();
      if (!tensors.contains(hf_name)) {
        if (hf_name == "score.weight" && fresh_value_head) continue;  // starts from its random init
        throw ModelError(tensors.where() + ": missing tensor '" + hf_name + "' (needed by " +
                         hf_architecture_name(config.architecture, config.head) + " as described by " +
                         config_path.string() + ")");
      }
      const SafetensorsReader& file = tensors.file_of(hf_name);
      const SafetensorsEntry& entry = file.entry(hf_name);
      if (at::IntArrayRef(entry.shape) != param.sizes()) {
        throw ModelError(file.path().string() + ": tensor '" + hf_name + "' has shape " +
                         shape_text(entry.shape) + " but " + config_path.string() + " implies " +
                         shape_text(param.sizes()));
      }
      param.copy_(file.tensor(hf_name));
      used.insert(hf_name);
    }
  }
  for (const auto& name : tensors.names()) {
    if (!used.count(name) && !ignorable(name, config)) {
      throw ModelError(tensors.file_of(name).path().string() + ": tensor '" + name + "' is not part of " +
                       hf_architecture_name(config.architecture, config.head) + " as described by " +
                       config_path.string() + " (wrong num_hidden_layers or architecture?)");
    }
  }
  model->to(options.device, options.dtype);
  return model;
}

void save_hf_checkpoint(Transformer& model, const fs::path& dir, const SaveOptions& options) {
  const std::string dtype = torch_dtype_name(options.dtype);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) throw ModelError(dir.string() + ": cannot create the checkpoint directory: " + ec.message());
  std::vector<std::pair<std::string, torch::Tensor>> tensors;
  for (const auto& item : model->named_parameters()) {
    tensors.emplace_back(hf_tensor_name(item.key()), item.value().detach().to(torch::kCPU, options.dtype));
  }
  write_safetensors(dir / "model.safetensors", tensors);
  const fs::path config_path = dir / "config.json";
  std::ofstream out(config_path, std::ios::trunc);
  out << hf_config_json(model->config(), dtype);
  if (!out) throw ModelError(config_path.string() + ": write failed");
}

}  // namespace rlwb::workers::model
