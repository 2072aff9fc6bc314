// The piece table of a tokenizer.model, read from its protobuf wire format
// (the published ModelProto layout: field 1 the pieces, each with its text
// and type; field 3 the normalizer spec with add_dummy_prefix). Debian's
// libsentencepiece 0.1.97 does not say which pieces are user-defined, and
// Hugging Face treats those (and control pieces) as added tokens matched in
// the raw text, so SentencePieceTokenizer reads the types here. Throws
// ModelError naming the source when the bytes are not such a message or
// lack the normalizer spec every trained model has (a file cut short
// between two fields still parses).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::workers::model {

// The values of the proto's SentencePiece.Type.
enum class PieceType : uint8_t {
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6
};

struct SentencePiecePieces {
  std::vector<std::string> text;  // by id
  std::vector<PieceType> type;    // by id
  bool add_dummy_prefix = true;   // the proto's default
};

SentencePiecePieces read_sentencepiece_pieces(std::string_view model_bytes, const std::string& source);

}  // namespace rlwb::workers::model
