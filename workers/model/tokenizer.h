// Tokenizer: text <-> token ids, the interface the roles and tasks use.
// Three kinds:
//   - BpeTokenizer (bpe_tokenizer.h): HF tokenizer.json byte-level BPE
//     (GPT-2, Qwen2, Llama 3 style) for real checkpoints;
//   - SentencePieceTokenizer (sentencepiece_tokenizer.h): a SentencePiece
//     tokenizer.model (Llama 2, Mistral, T5 style) through libsentencepiece;
//   - CharTokenizer (char_tokenizer.h): one token per character for the
//     small built-in tasks (arithmetic).
// encode() adds no BOS/EOS: the caller decides (the prompt template of a
// task says where they go).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workers/model/transformer_config.h"

namespace rlwb::workers::model {

struct SpecialTokenIds {
  int64_t bos = -1;  // -1: the tokenizer has none
  int64_t eos = -1;
  int64_t pad = -1;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Throws ModelError for text the tokenizer cannot represent.
  virtual std::vector<int64_t> encode(std::string_view text) const = 0;
  // Throws ModelError for an id outside [0, vocab_size()).
  virtual std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const = 0;
  // One more than the largest id the tokenizer can produce.
  virtual int64_t vocab_size() const = 0;
  virtual std::optional<int64_t> token_id(std::string_view token) const = 0;

  const SpecialTokenIds& special_ids() const { return special_ids_; }

 protected:
  SpecialTokenIds special_ids_;
};

// A directory holding tokenizer.json, or else tokenizer.model (tokenizer.json
// wins when both are there, as in transformers), and optionally
// tokenizer_config.json / special_tokens_map.json naming bos/eos/pad and
// special tokens (tokenizer_config.h); or the tokenizer.json or
// tokenizer.model file itself.
std::unique_ptr<Tokenizer> load_tokenizer(const std::filesystem::path& path);

// Throws ModelError naming both files when the tokenizer produces ids the
// model has no embedding for (tokenizer vocab_size > config vocab_size).
// A model vocabulary larger than the tokenizer's is fine (HF pads it).
void check_tokenizer_fits(const Tokenizer& tokenizer, const std::string& tokenizer_source,
                          const TransformerConfig& config, const std::string& config_source);

}  // namespace rlwb::workers::model
