// SentencePieceModel: a tokenizer.model in Debian's libsentencepiece, the
// library that trained it, so that its normalizer (NFKC rules, white-space
// handling, the dummy prefix) and its BPE or unigram segmentation are the
// library's own and not a re-implementation. The library is reached
// through librlwb_sentencepiece.so (sentencepiece_shim/sentencepiece_shim.h
// says why it is loaded apart); SentencePieceTokenizer
// (sentencepiece_tokenizer.h) is its one user.
//
// The shim is found at $RLWB_SENTENCEPIECE_SHIM when that is set, else where
// the build put it. Loading a model throws ModelError naming the file and
// what to do when the shim is missing or the bytes are not a model.
// encode() is safe to call from several threads at once.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::workers::model {

class SentencePieceModel {
 public:
  struct ReservedIds {
    int32_t unk = -1, bos = -1, eos = -1, pad = -1;  // -1: the model has none
  };

  // bytes: the contents of a tokenizer.model; source names it in errors.
  SentencePieceModel(const std::string& bytes, const std::string& source);
  ~SentencePieceModel();
  SentencePieceModel(const SentencePieceModel&) = delete;
  SentencePieceModel& operator=(const SentencePieceModel&) = delete;

  // text (valid UTF-8) as the library's Encode gives it, dummy prefix included.
  std::vector<int64_t> encode(std::string_view text) const;
  int32_t piece_count() const { return piece_count_; }
  const ReservedIds& reserved_ids() const { return reserved_; }

 private:
  std::string source_;
  void* handle_ = nullptr;  // the shim's model
  int32_t piece_count_ = 0;
  ReservedIds reserved_;
};

}  // namespace rlwb::workers::model
