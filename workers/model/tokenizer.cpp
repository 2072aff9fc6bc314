#include "workers/model/tokenizer.h"

#include <fstream>
#include <sstream>

#include "workers/model/bpe_tokenizer.h"
#include "workers/model/model_error.h"
#include "workers/model/sentencepiece_tokenizer.h"
#include "workers/model/tokenizer_config.h"

namespace rlwb::workers::model {
namespace {

namespace fs = std::filesystem;

std::string read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ModelError(path.string() + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const fs::path& path) {
  fs::path file = path;
  if (fs::is_directory(path)) {
    // tokenizer.json first, as transformers' fast tokenizers prefer it.
    file = path / "tokenizer.json";
    if (!fs::exists(file) && fs::exists(path / "tokenizer.model")) file = path / "tokenizer.model";
    if (!fs::exists(file)) {
      throw ModelError(path.string() +
                       ": holds neither tokenizer.json nor tokenizer.model (copy the "
                       "tokenizer files of the checkpoint into it)");
    }
  }
  if (!fs::exists(file)) throw ModelError(file.string() + ": no such tokenizer file");
  const TokenizerConfig config = read_tokenizer_config(file.parent_path());
  if (file.extension() == ".model") {
    return std::make_unique<SentencePieceTokenizer>(read_bytes(file), file.string(), config);
  }
  auto tokenizer = std::make_unique<BpeTokenizer>(read_bytes(file), file.string());
  if (!config.source.empty())
    tokenizer->set_special_tokens(config.bos, config.eos, config.pad, config.source);
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
