#include "workers/model/tokenizer_config.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json read_json(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Json::exception& e) {
    throw ModelError(path.string() + ": not valid JSON: " + e.what());
  }
}

// "eos_token": "</s>" or {"content": "</s>", ...} or null or absent: "" for the last two.
std::string token_text(const Json& value, const std::string& where) {
  if (value.is_null()) return "";
  if (value.is_string()) return value.get<std::string>();
  if (value.is_object() && value.contains("content") && value.at("content").is_string()) {
    return value.at("content").get<std::string>();
  }
  throw ModelError(where + " is neither a token string nor {\"content\": ...}: " + value.dump());
}

void read_names(const Json& j, const fs::path& path, TokenizerConfig& config) {
  if (!j.is_object()) throw ModelError(path.string() + ": not a JSON object");
  const std::pair<const char*, std::string*> named[] = {{"bos_token", &config.bos},
                                                        {"eos_token", &config.eos},
                                                        {"pad_token", &config.pad},
                                                        {"unk_token", &config.unk}};
  for (const auto& [key, out] : named) {
    if (out->empty() && j.contains(key)) *out = token_text(j.at(key), path.string() + ": '" + key + "'");
  }
  for (const char* key : {"additional_special_tokens", "extra_special_tokens"}) {
    if (!j.contains(key) || j.at(key).is_null()) continue;
    const Json& list = j.at(key);
    if (!list.is_array() && !list.is_object()) {
      throw ModelError(path.string() + ": '" + key + "' is not a list of tokens");
    }
    for (const auto& item : list) {  // an object maps names to tokens (transformers 5)
      config.special.push_back(token_text(item, path.string() + ": an entry of '" + key + "'"));
    }
  }
}

void read_added_tokens(const Json& j, const fs::path& path, TokenizerConfig& config) {
  if (!j.contains("added_tokens_decoder")) return;
  const Json& decoder = j.at("added_tokens_decoder");
  if (!decoder.is_object()) throw ModelError(path.string() + ": 'added_tokens_decoder' is not an object");
  for (const auto& [key, entry] : decoder.items()) {
    int64_t id = -1;
    try {
      size_t used = 0;
      id = std::stoll(key, &used);
      if (used != key.size()) id = -1;
    } catch (const std::exception&) {
    }
    if (id < 0) {
      throw ModelError(path.string() + ": 'added_tokens_decoder' has the key '" + key +
                       "', which is not a token id");
    }
    config.added.push_back(added_token_from_json(entry, id, path.string() + ": 'added_tokens_decoder'"));
  }
}

}  // namespace

TokenizerConfig read_tokenizer_config(const fs::path& dir) {
  TokenizerConfig config;
  for (const char* name : {"tokenizer_config.json", "special_tokens_map.json"}) {
    const fs::path path = dir / name;
    if (!fs::exists(path)) continue;
    const Json j = read_json(path);
    read_names(j, path, config);
    if (std::string(name) == "tokenizer_config.json") read_added_tokens(j, path, config);
    config.source += (config.source.empty() ? "" : " + ") + path.string();
  }
  for (const std::string* name : {&config.bos, &config.eos, &config.pad, &config.unk}) {
    if (!name->empty()) config.special.push_back(*name);
  }
  std::sort(config.special.begin(), config.special.end());
  config.special.erase(std::unique(config.special.begin(), config.special.end()), config.special.end());
  return config;
}

}  // namespace rlwb::workers::model
