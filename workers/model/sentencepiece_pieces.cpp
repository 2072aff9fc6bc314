#include "workers/model/sentencepiece_pieces.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": not a SentencePiece model (" + what +
                   "); the file is corrupt or cut short: copy tokenizer.model again from the checkpoint it "
                   "came with");
}

// The bytes of a length-delimited field whose tag was just read.
std::string read_bytes(CodedInputStream& in, const std::string& source, const char* what) {
  uint32_t size = 0;
  std::string bytes;
  if (!in.ReadVarint32(&size) || !in.ReadString(&bytes, static_cast<int>(size))) {
    fail(source, std::string("the ") + what + " ends early");
  }
  return bytes;
}

void skip(CodedInputStream& in, uint32_t tag, const std::string& source) {
  if (!WireFormatLite::SkipField(&in, tag)) fail(source, "a field ends early or has a bad wire type");
}

void read_piece(const std::string& bytes, SentencePiecePieces& out, const std::string& source) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  std::string text;
  uint32_t type = static_cast<uint32_t>(PieceType::kNormal);
  while (const uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    if (field == 1 && WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED) {
      text = read_bytes(in, source, "text of a piece");
    } else if (field == 3 && WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      if (!in.ReadVarint32(&type)) fail(source, "the type of a piece ends early");
    } else {
      skip(in, tag, source);
    }
  }
  if (!in.ConsumedEntireMessage()) fail(source, "piece " + std::to_string(out.text.size()) + " is malformed");
  if (type < 1 || type > 6) {
    fail(source,
         "piece " + std::to_string(out.text.size()) + " has the unknown type " + std::to_string(type));
  }
  out.text.push_back(std::move(text));
  out.type.push_back(static_cast<PieceType>(type));
}

bool read_add_dummy_prefix(const std::string& bytes, const std::string& source) {
  CodedInputStream in(reinterpret_cast<const uint8_t*>(bytes.data()), static_cast<int>(bytes.size()));
  bool add = true;
  while (const uint32_t tag = in.ReadTag()) {
    if (WireFormatLite::GetTagFieldNumber(tag) == 3 &&
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_VARINT) {
      uint64_t v = 0;
      if (!in.ReadVarint64(&v)) fail(source, "normalizer_spec.add_dummy_prefix ends early");
      add = v != 0;
    } else {
      skip(in, tag, source);
    }
  }
  return add;
}

}  // namespace

SentencePiecePieces read_sentencepiece_pieces(std::string_view model_bytes, const std::string& source) {
  SentencePiecePieces out;
  bool has_normalizer_spec = false;
  CodedInputStream in(reinterpret_cast<const uint8_t*>(model_bytes.data()),
                      static_cast<int>(model_bytes.size()));
  in.SetTotalBytesLimit(static_cast<int>(model_bytes.size()) + 1);
  while (const uint32_t tag = in.ReadTag()) {
    const int field = WireFormatLite::GetTagFieldNumber(tag);
    const bool delimited = WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (field == 1 && delimited) {
      read_piece(read_bytes(in, source, "piece table"), out, source);
    } else if (field == 3 && delimited) {
      out.add_dummy_prefix = read_add_dummy_prefix(read_bytes(in, source, "normalizer spec"), source);
      has_normalizer_spec = true;
    } else {
      skip(in, tag, source);
    }
  }
  if (!in.ConsumedEntireMessage()) fail(source, "a field has a bad tag");
  if (out.text.empty()) fail(source, "it has no pieces");
  // Every trained model has one, after the pieces: a file cut between fields lacks it.
  if (!has_normalizer_spec) fail(source, "it has no normalizer spec");
  return out;
}

}  // namespace rlwb::workers::model
