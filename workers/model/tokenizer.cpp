#include "workers/model/tokenizer.h"

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "workers/model/bpe_tokenizer.h"
#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

namespace fs = std::filesystem;

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  if (!in) throw ModelError(path.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "eos_token": "<|endoftext|>" or {"content": "<|endoftext|>", ...} or null.
std::string token_name(const nlohmann::json& config, const char* key) {
  if (!config.contains(key)) return "";
  const auto& v = config.at(key);
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v.at("content").get<std::string>();
  return "";
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& path) {
  const fs::path file = fs::is_directory(path) ? path / "tokenizer.json" : path;
  if (!fs::exists(file)) throw ModelError(file.string() + ": no such tokenizer file");
  auto tokenizer = std::make_unique<BpeTokenizer>(read_text(file), file.string());
  const fs::path config_path = file.parent_path() / "tokenizer_config.json";
  if (fs::exists(config_path)) {
    nlohmann::json config;
    try {
      config = nlohmann::json::parse(read_text(config_path));
    } catch (const nlohmann::json::exception& e) {
      throw ModelError(config_path.string() + ": not valid JSON: " + e.what());
    }
    tokenizer->set_special_tokens(token_name(config, "bos_token"), token_name(config, "eos_token"),
                                  token_name(config, "pad_token"), config_path.string());
  }
  return tokenizer;
}

void check_tokenizer_fits(const Tokenizer& tokenizer, const std::string& tokenizer_source,
                          const TransformerConfig& config, const std::string& config_source) {
  if (tokenizer.vocab_size() > config.vocab_size) {
    throw ModelError(tokenizer_source + ": the tokenizer has " + std::to_string(tokenizer.vocab_size()) +
                     " token ids but " + config_source + " sets 'vocab_size' = " +
                     std::to_string(config.vocab_size) + " (tokenizer and model do not belong together)");
  }
}

}  // namespace rlwb::workers::model
