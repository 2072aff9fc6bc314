// AddedTokens: the "added tokens" of a Hugging Face tokenizer (special
// tokens such as <|im_start|> and any token added after training), cut out
// of a text before the model's own tokenization sees it, the way the Rust
// `tokenizers` library's AddedVocabulary does: leftmost match first, the
// longest among those starting there, honouring single_word (no word
// character next to the match), lstrip and rstrip (the white space beside
// it belongs to the token). Used by BpeTokenizer (tokenizer.json) and
// SentencePieceTokenizer (tokenizer.model + tokenizer_config.json).
#pragma once

#include <array>
#include <nlohmann/json_fwd.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::workers::model {

struct AddedToken {
  std::string content;  // as in the file
  std::string match;    // what the text is searched for (content, or its normal form), and what decode gives
  int64_t id = -1;
  bool special = false, single_word = false, lstrip = false, rstrip = false;
  bool normalized = false;  // matched after the normalizer (tokenizer.json) rather than in the raw text
};

// One entry of tokenizer.json's "added_tokens" or tokenizer_config.json's
// "added_tokens_decoder" ({"content": ..., "special": ..., "lstrip": ...});
// id is the entry's. `normalized` defaults as the library's does (special
// tokens raw, others normalized); match is left empty. Throws ModelError
// naming `where` for an entry without content.
AddedToken added_token_from_json(const nlohmann::json& entry, int64_t id, const std::string& where);

class AddedTokens {
 public:
  // A piece of a text: a whole added token (id >= 0) or text between them
  // (id -1), as the bytes [begin, end).
  struct Segment {
    size_t begin, end;
    int64_t id;
  };

  AddedTokens() = default;
  // tokens in file order: of two that match at one place the longer wins,
  // of two as long the earlier.
  explicit AddedTokens(std::vector<AddedToken> tokens);
  bool empty() const { return tokens_.empty(); }
  const std::vector<AddedToken>& tokens() const { return tokens_; }
  // The token whose content is exactly `content`, or nullptr.
  const AddedToken* find(std::string_view content) const;

  // text (valid UTF-8) cut into added tokens and the text between them, in
  // order; the segments cover the text but for white space that lstrip or
  // rstrip gave to a token.
  std::vector<Segment> cut(std::string_view text) const;

 private:
  std::vector<AddedToken> tokens_;                      // longest match first
  std::array<std::vector<size_t>, 256> by_first_byte_;  // indices into tokens_, longest first
};

}  // namespace rlwb::workers::model
