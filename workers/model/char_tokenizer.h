// CharTokenizer: one token per character of a small alphabet, for the
// built-in tasks (prompts like "37+48=" and answers like "85").
// Ids: 0 <pad>, 1 <bos>, 2 <eos>, then the alphabet in order; by default
// "0123456789+-*= " (ids 3..17, vocab_size 18).
#pragma once

#include <array>

#include "workers/model/tokenizer.h"

namespace rlwb::workers::model {

class CharTokenizer : public Tokenizer {
 public:
  static constexpr std::string_view kArithmeticAlphabet = "0123456789+-*= ";
  static constexpr int64_t kPad = 0, kBos = 1, kEos = 2;

  // alphabet: distinct single-byte characters; throws ModelError otherwise.
  explicit CharTokenizer(std::string_view alphabet = kArithmeticAlphabet);

  // Throws ModelError naming a character outside the alphabet.
  std::vector<int64_t> encode(std::string_view text) const override;
  // Specials render as <pad>, <bos>, <eos> unless skipped.
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const override;
  int64_t vocab_size() const override { return 3 + static_cast<int64_t>(alphabet_.size()); }
  std::optional<int64_t> token_id(std::string_view token) const override;
  const std::string& alphabet() const { return alphabet_; }

 private:
  std::string alphabet_;
  std::array<int64_t, 256> id_of_byte_{};  // -1: not in the alphabet
};

}  // namespace rlwb::workers::model
