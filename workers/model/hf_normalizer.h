// HfNormalizer: the `normalizer` of a Hugging Face tokenizer.json, applied
// by BpeTokenizer (bpe_tokenizer.h) to the text between added tokens before
// pre-tokenization. Supported: null (none), NFC, NFD, NFKC, NFKD (through
// ICU, unicode_text.h) and a Sequence of these, which covers GPT-2, Qwen2
// and Llama 3. Any other normalizer is refused by name when loading.
#pragma once

#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {

class HfNormalizer {
 public:
  HfNormalizer() = default;  // none
  // spec: the value of tokenizer.json's "normalizer"; source names the file
  // in the ModelError thrown for an unsupported normalizer.
  HfNormalizer(const nlohmann::json& spec, const std::string& source);

  bool is_identity() const { return steps_.empty(); }
  // text (valid UTF-8) normalized by every step in order.
  std::string apply(std::string_view text) const;

 private:
  std::vector<unicode::NormalForm> steps_;
};

}  // namespace rlwb::workers::model
