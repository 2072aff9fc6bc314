// BpeTokenizer: Hugging Face tokenizer.json byte-level BPE, the tokenizer
// of GPT-2, Qwen2 and Llama 3 checkpoints. Loaded by load_tokenizer()
// (tokenizer.h); the actor and the tasks use it through Tokenizer.
//
// Encoding: added/special tokens are cut out first (exact, longest match);
// the rest is split into pre-tokens, each pre-token's UTF-8 bytes are mapped
// to printable characters (GPT-2's byte-to-unicode table) and merged by
// the BPE merge ranks. Decoding maps back to bytes.
//
// Approximations (where this differs from the Rust `tokenizers` library):
//   - The pre-tokenizer regex is not run by a regex engine: a hand-written
//     scanner implements the two pattern families in use, recognised in
//     tokenizer.json -- GPT-2's
//       's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
//     and the Qwen2 / Llama 3 one
//       (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,K}|
//       ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+   (K = 1 or 3).
//     Any other pattern is refused with an error naming it.
//   - Unicode classes are approximated: ASCII is exact; outside ASCII,
//     common white space, decimal digits of the major scripts and the
//     punctuation/symbol blocks (Latin-1 punctuation, General Punctuation,
//     currency, arrows, math operators, box drawing, CJK punctuation,
//     full-width punctuation, emoji) are classified; every other code point
//     counts as a letter (\p{L}). Combining marks count as punctuation.
//   - The NFC normalizer (Qwen2) is not applied: text is taken as given.
//   - Added tokens' lstrip/rstrip/single_word flags are ignored.
//   - The post-processor (e.g. Llama 3 prepending <|begin_of_text|>) is not
//     run: encode() never adds special tokens.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "workers/model/tokenizer.h"

namespace rlwb::workers::model {

class BpeTokenizer : public Tokenizer {
 public:
  enum class Pretokenizer { kGpt2, kQwen2Llama3 };

  // json_text: the contents of a tokenizer.json; source names it in errors.
  // Throws ModelError naming the source and setting for anything but a
  // byte-level BPE.
  BpeTokenizer(const std::string& json_text, const std::string& source);

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  std::optional<int64_t> token_id(std::string_view token) const override;

  // Names bos/eos/pad by token text (from tokenizer_config.json); unknown
  // names throw ModelError naming `source`.
  void set_special_tokens(const std::string& bos, const std::string& eos, const std::string& pad,
                          const std::string& source);

  // The pre-tokens of text (before byte mapping), for tests of the scanner.
  std::vector<std::string> pretokenize(std::string_view text) const;

 private:
  struct AddedToken {
    std::string content;
    int64_t id;
    bool special;
  };
  void encode_word(std::string_view word, std::vector<int64_t>& out) const;

  std::string source_;
  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> token_of_id_;  // "" where no token has that id
  std::map<std::pair<std::string, std::string>, int64_t> merge_rank_;
  std::vector<AddedToken> added_;  // longest content first
  enum class AddedKind : uint8_t { kNone, kPlain, kSpecial };
  std::vector<AddedKind> added_kind_;  // by id
  Pretokenizer pretokenizer_ = Pretokenizer::kGpt2;
  int64_t max_digits_ = 0;  // \p{N}{1,K}; 0 = unlimited (GPT-2's \p{N}+)
  bool add_prefix_space_ = false;
  bool ignore_merges_ = false;  // a pre-token that is a whole vocab entry is one token
  int64_t vocab_size_ = 0;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

}  // namespace rlwb::workers::model
