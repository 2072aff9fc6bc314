// BpeTokenizer: Hugging Face tokenizer.json byte-level BPE, the tokenizer
// of GPT-2, Qwen2 and Llama 3 checkpoints. Loaded by load_tokenizer()
// (tokenizer.h); the actor and the tasks use it through Tokenizer.
//
// encode() gives the ids of the Rust `tokenizers` library's
// `encode(text, add_special_tokens=False)`, in its order of steps:
//   1. added tokens with normalized=false are cut out of the raw text
//      (leftmost, then longest match), honouring single_word (no word
//      character next to the match), lstrip and rstrip (the white space
//      beside it belongs to the token);
//   2. the text between them is normalized (hf_normalizer.h: NFC, NFD,
//      NFKC, NFKD, Sequence), and added tokens with normalized=true are
//      cut out of the result the same way (matched in their normal form);
//   3. the rest is pre-tokenized (hf_pretokenizer.h: Split with the file's
//      own pattern through PCRE2, ByteLevel), and each pre-token is merged
//      by the BPE merge ranks (lowest rank first, leftmost among equals;
//      a whole-word vocabulary hit first when ignore_merges).
// decode() is `decode(ids, skip_special_tokens)` with the ByteLevel decoder:
// tokens back to bytes, ill-formed UTF-8 replaced by U+FFFD; with no
// decoder, the tokens joined by spaces, as the library does.
// tests/workers/model/tokenizer_parity_test.cpp checks both against the
// library on a 10,000-line corpus of many scripts.
//
// Where this differs from the library, on purpose:
//   - The post-processor is not run: encode() adds no special tokens (the
//     Tokenizer contract), and with add_special_tokens=False the
//     post-processors of these files (ByteLevel, TemplateProcessing) change
//     offsets only. The file's truncation and padding are not applied.
//   - Text that is not valid UTF-8, a byte the vocabulary lacks (with no
//     unk_token) and an id no token has are errors, not silently dropped.
//   - The Unicode tables are the system's (PCRE2 for \p{..}, ICU for
//     normalization and properties), which may be older than the library's:
//     characters assigned in recent Unicode versions may class differently.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "workers/model/added_tokens.h"
#include "workers/model/hf_normalizer.h"
#include "workers/model/hf_pretokenizer.h"
#include "workers/model/tokenizer.h"

namespace rlwb::workers::model {

class BpeTokenizer : public Tokenizer {
 public:
  // json_text: the contents of a tokenizer.json; source names it in errors.
  // Throws ModelError naming the source and setting for anything but a
  // byte-level BPE, and for a normalizer, pre-tokenizer or decoder that is
  // not supported.
  BpeTokenizer(const std::string& json_text, const std::string& source);

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const override;
  int64_t vocab_size() const override { return vocab_size_; }
  std::optional<int64_t> token_id(std::string_view token) const override;

  // Names bos/eos/pad by token text (from tokenizer_config.json); unknown
  // names throw ModelError naming `source`.
  void set_special_tokens(const std::string& bos, const std::string& eos, const std::string& pad,
                          const std::string& source);

  // The pre-tokens of text (normalized, added tokens not cut out), as the
  // bytes of the text, for tests of the pre-tokenizer.
  std::vector<std::string> pretokenize(std::string_view text) const;

 private:
  struct FromJson {};
  BpeTokenizer(FromJson, const nlohmann::json& j, const std::string& source);

  struct Merge {
    int32_t rank, new_id;
  };
  enum class Decoder : uint8_t { kByteLevel, kNone };
  enum class AddedKind : uint8_t { kNone, kPlain, kSpecial };

  void encode_normalized(std::string_view text, std::vector<int64_t>& out) const;
  void encode_word(const std::string& word, std::vector<int64_t>& out) const;
  const Merge* merge_of(int32_t left, int32_t right) const;

  std::string source_;
  HfNormalizer normalizer_;
  HfPretokenizer pretokenizer_;
  Decoder decoder_ = Decoder::kByteLevel;
  std::unordered_map<std::string, int64_t> vocab_;
  std::vector<std::string> token_of_id_;        // "" where no token has that id
  std::unordered_map<uint64_t, Merge> merges_;  // (left id << 32 | right id) -> merge
  AddedTokens raw_added_, normalized_added_;    // matched in the raw, the normalized text
  std::vector<AddedKind> added_kind_;           // by id
  int64_t unk_id_ = -1;
  bool fuse_unk_ = false;
  bool ignore_merges_ = false;  // a pre-token that is a whole vocab entry is one token
  int64_t vocab_size_ = 0;
  mutable std::mutex cache_mutex_;
  mutable std::unordered_map<std::string, std::vector<int64_t>> cache_;
};

}  // namespace rlwb::workers::model
