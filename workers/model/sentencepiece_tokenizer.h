// SentencePieceTokenizer: a SentencePiece tokenizer.model (Llama 1/2,
// Mistral, T5, Gemma style; BPE or unigram, with or without byte fallback),
// tokenizing as a Hugging Face fast tokenizer converted from that model in
// its SentencePiece-faithful form does. Loaded by load_tokenizer()
// (tokenizer.h) for a directory that has tokenizer.model and no
// tokenizer.json.
//
// encode() (no BOS/EOS, as add_special_tokens=False):
//   1. added tokens are cut out of the raw text (added_tokens.h): the
//      model's control and unknown pieces (special) and user-defined pieces
//      (not special), as transformers' converter adds them, and the entries
//      of tokenizer_config.json's added_tokens_decoder, with their flags;
//   2. each piece of text between them is encoded by libsentencepiece
//      itself (sentencepiece_library.h): the model's normalizer, its dummy
//      prefix (so every piece gets one, as the Llama 2 tokenizer.json's
//      Prepend normalizer gives it), its BPE merges or unigram lattice, its
//      byte fallback.
// decode(ids, skip_special_tokens) is the tokenizers decoder of such a
// model: "▁" becomes a space, runs of <0xXX> byte pieces become their
// bytes (U+FFFD for each byte of a run that is not UTF-8), and one leading
// space goes when the model adds a dummy prefix. Special tokens are the
// control and unknown pieces and every token tokenizer_config.json /
// special_tokens_map.json name special.
// tests/workers/model/tokenizer_parity_test.cpp checks both on a
// 10,000-line corpus against the python sentencepiece package and HF
// `tokenizers`.
//
// Where this differs from transformers, on purpose:
//   - transformers 5's LlamaTokenizer converts with a Metaspace
//     pre-tokenizer that adds no dummy prefix after an added token nor to
//     text that starts with a space, and T5Tokenizer splits on white space
//     before the unigram model; both then differ from the ids the model was
//     trained with (docs/model.md has the counts). RLWB gives the library's.
//   - Added tokens are matched in the raw text whatever their `normalized`
//     flag: the normalizer runs inside the library.
//   - Text that is not valid UTF-8 and an id no token has are errors.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "workers/model/added_tokens.h"
#include "workers/model/sentencepiece_library.h"
#include "workers/model/tokenizer.h"
#include "workers/model/tokenizer_config.h"

namespace rlwb::workers::model {

class SentencePieceTokenizer : public Tokenizer {
 public:
  // model_bytes: the contents of a tokenizer.model; source names it in
  // errors. config: what tokenizer_config.json / special_tokens_map.json
  // say (empty when there are none); bos/eos/pad default to the model's own.
  // Throws ModelError naming the file for a corrupt or cut-short model, and
  // for a special token that is neither a piece nor an added token.
  SentencePieceTokenizer(const std::string& model_bytes, const std::string& source,
                         const TokenizerConfig& config = {});

  std::vector<int64_t> encode(std::string_view text) const override;
  std::string decode(const std::vector<int64_t>& ids, bool skip_special_tokens = true) const override;
  int64_t vocab_size() const override { return static_cast<int64_t>(token_of_id_.size()); }
  std::optional<int64_t> token_id(std::string_view token) const override;

 private:
  std::string source_;
  std::unique_ptr<SentencePieceModel> model_;
  AddedTokens added_;
  std::unordered_map<std::string, int64_t> piece_ids_;
  std::vector<std::string> token_of_id_;  // "" where no token has that id
  std::vector<bool> special_;             // by id
  bool strip_leading_space_ = true;       // the model adds a dummy prefix, so decode takes it off
};

}  // namespace rlwb::workers::model
