#include "workers/model/sentencepiece_tokenizer.h"

#include <algorithm>
#include <map>

#include "workers/model/model_error.h"
#include "workers/model/sentencepiece_pieces.h"
#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {
namespace {

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": " + what);
}

// The byte of a "<0xXX>" token, as the tokenizers ByteFallback decoder reads it; -1 for any other token.
int byte_of_token(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  const int hi = hex(token[3]), lo = hex(token[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

void append_replacing_meta_space(std::string& out, const std::string& token) {
  static const std::string kMetaSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's space
  for (size_t i = 0; i < token.size();) {
    if (token.compare(i, kMetaSpace.size(), kMetaSpace) == 0) {
      out += ' ';
      i += kMetaSpace.size();
    } else {
      out += token[i++];
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------
// [SECTION] Loading

SentencePieceTokenizer::SentencePieceTokenizer(const std::string& model_bytes, const std::string& source,
                                               const TokenizerConfig& config)
    : source_(source), model_(std::make_unique<SentencePieceModel>(model_bytes, source)) {
  const SentencePiecePieces pieces = read_sentencepiece_pieces(model_bytes, source);
  const auto piece_count = static_cast<int64_t>(pieces.text.size());
  if (piece_count != model_->piece_count()) {
    fail(source, "has " + std::to_string(piece_count) + " pieces but libsentencepiece reads " +
                     std::to_string(model_->piece_count()) + "; the file is corrupt: copy it again");
  }
  strip_leading_space_ = pieces.add_dummy_prefix;
  // By id, so that added tokens of one length are matched in id order.
  std::map<int64_t, AddedToken> added;
  for (int64_t id = 0; id < piece_count; ++id) {
    const std::string& text = pieces.text[static_cast<size_t>(id)];
    piece_ids_.emplace(text, id);
    const PieceType type = pieces.type[static_cast<size_t>(id)];
    if (type == PieceType::kControl || type == PieceType::kUnknown || type == PieceType::kUserDefined) {
      AddedToken a;
      a.content = a.match = text;
      a.id = id;
      a.special = type != PieceType::kUserDefined;
      added.emplace(id, std::move(a));
    }
  }
  for (AddedToken a : config.added) {
    a.match = a.content;
    added[a.id] = std::move(a);
  }
  for (const std::string& name : config.special) {
    auto it =
        std::find_if(added.begin(), added.end(), [&](const auto& kv) { return kv.second.content == name; });
    if (it != added.end()) {
      it->second.special = true;
      continue;
    }
    auto piece = piece_ids_.find(name);
    if (piece == piece_ids_.end()) {
      fail(config.source, "names the special token '" + name + "', which is neither a piece of " + source +
                              " nor in 'added_tokens_decoder' (add it there with its id)");
    }
    AddedToken a;
    a.content = a.match = name;
    a.id = piece->second;
    a.special = true;
    added[a.id] = std::move(a);
  }

  const int64_t size = std::max(piece_count, added.empty() ? 0 : added.rbegin()->first + 1);
  token_of_id_.assign(static_cast<size_t>(size), "");
  special_.assign(static_cast<size_t>(size), false);
  std::copy(pieces.text.begin(), pieces.text.end(), token_of_id_.begin());
  std::vector<AddedToken> in_id_order;
  for (auto& [id, a] : added) {
    token_of_id_[static_cast<size_t>(id)] = a.content;
    special_[static_cast<size_t>(id)] = a.special;
    in_id_order.push_back(std::move(a));
  }
  added_ = AddedTokens(std::move(in_id_order));

  const auto& reserved = model_->reserved_ids();
  auto resolve = [&](const std::string& name, int32_t model_id, const char* setting) -> int64_t {
    if (name.empty()) return model_id;
    if (auto id = token_id(name)) return *id;
    fail(config.source,
         std::string("'") + setting + "' is '" + name + "', which is not a token of " + source);
  };
  special_ids_.bos = resolve(config.bos, reserved.bos, "bos_token");
  special_ids_.eos = resolve(config.eos, reserved.eos, "eos_token");
  special_ids_.pad = resolve(config.pad, reserved.pad, "pad_token");
}

// ---------------------------------------------------------------------------
// [SECTION] Encoding and decoding

std::vector<int64_t> SentencePieceTokenizer::encode(std::string_view text) const {
  if (const size_t bad = unicode::first_invalid_utf8(text); bad != std::string_view::npos) {
    fail(source_, "cannot encode text that is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  std::vector<int64_t> ids;
  for (const auto& seg : added_.cut(text)) {
    if (seg.id >= 0) {
      ids.push_back(seg.id);
    } else {
      const auto piece_ids = model_->encode(text.substr(seg.begin, seg.end - seg.begin));
      ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
    }
  }
  return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::string out, bytes;
  size_t byte_count = 0;
  // A run of byte tokens is its bytes when they are UTF-8, else one U+FFFD for each.
  auto flush_bytes = [&] {
    if (byte_count == 0) return;
    if (unicode::first_invalid_utf8(bytes) == std::string::npos) {
      out += bytes;
    } else {
      for (size_t k = 0; k < byte_count; ++k) out += "\xEF\xBF\xBD";
    }
    bytes.clear();
    byte_count = 0;
  };
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size() || token_of_id_[static_cast<size_t>(id)].empty()) {
      fail(source_, "cannot decode id " + std::to_string(id) + ": no token has it");
    }
    if (skip_special_tokens && special_[static_cast<size_t>(id)]) continue;
    const std::string& token = token_of_id_[static_cast<size_t>(id)];
    if (const int b = byte_of_token(token); b >= 0) {
      bytes += static_cast<char>(b);
      ++byte_count;
      continue;
    }
    flush_bytes();
    append_replacing_meta_space(out, token);
  }
  flush_bytes();
  if (strip_leading_space_ && !out.empty() && out[0] == ' ') out.erase(0, 1);
  return out;
}

std::optional<int64_t> SentencePieceTokenizer::token_id(std::string_view token) const {
  if (const AddedToken* a = added_.find(token)) return a->id;
  auto it = piece_ids_.find(std::string(token));
  if (it == piece_ids_.end()) return std::nullopt;
  return it->second;
}

}  // namespace rlwb::workers::model
