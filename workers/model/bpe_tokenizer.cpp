#include "workers/model/bpe_tokenizer.h"

#include <algorithm>
#include <limits>
#include <nlohmann/json.hpp>
#include <queue>

#include "workers/model/model_error.h"
#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::json;

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": " + what);
}

Json parse_json(const std::string& text, const std::string& source) {
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {
    fail(source, std::string("not valid JSON: ") + e.what());
  }
}

const Json& pre_tokenizer_spec(const Json& j, const std::string& source) {
  if (!j.is_object() || !j.contains("pre_tokenizer") || j.at("pre_tokenizer").is_null()) {
    fail(source, "missing 'pre_tokenizer' (a byte-level BPE needs ByteLevel)");
  }
  return j.at("pre_tokenizer");
}

const Json& normalizer_spec(const Json& j) {
  static const Json none;
  return j.is_object() && j.contains("normalizer") ? j.at("normalizer") : none;
}

// A string setting that may be null or absent; "" for both.
std::string optional_string(const Json& m, const char* key) {
  return m.contains(key) && m.at(key).is_string() ? m.at(key).get<std::string>() : "";
}

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

// ---------------------------------------------------------------------------
// [SECTION] Loading

BpeTokenizer::BpeTokenizer(const std::string& json_text, const std::string& source)
    : BpeTokenizer(FromJson{}, parse_json(json_text, source), source) {}

BpeTokenizer::BpeTokenizer(FromJson, const Json& j, const std::string& source)
    : source_(source),
      normalizer_(normalizer_spec(j), source),
      pretokenizer_(pre_tokenizer_spec(j, source), source) {
  if (!pretokenizer_.has_byte_level()) {
    fail(source, "pre_tokenizer has no ByteLevel step; only byte-level BPE is supported");
  }
  if (!j.contains("model") || !j.at("model").is_object()) fail(source, "missing 'model'");
  const Json& m = j.at("model");
  const std::string type = m.value("type", std::string("BPE"));
  if (type != "BPE") fail(source, "model.type is '" + type + "'; only byte-level BPE is supported");
  if (m.value("byte_fallback", false)) {
    fail(source, "model.byte_fallback is true (a SentencePiece-style BPE); only byte-level BPE is supported");
  }
  if (m.contains("dropout") && !m.at("dropout").is_null() && m.at("dropout").get<double>() != 0.0) {
    fail(source, "model.dropout is set; BPE dropout samples its merges and is for training only");
  }
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"}) {
    if (!optional_string(m, key).empty()) {
      fail(source, std::string("model.") + key + " is set; a byte-level BPE has none");
    }
  }
  if (!m.contains("vocab") || !m.at("vocab").is_object()) fail(source, "missing 'model.vocab'");
  ignore_merges_ = m.value("ignore_merges", false);
  fuse_unk_ = m.value("fuse_unk", false);

  int64_t max_id = -1;
  for (const auto& [token, id] : m.at("vocab").items()) {
    const auto v = id.get<int64_t>();
    if (v < 0 || v > std::numeric_limits<int32_t>::max()) {
      fail(source, "model.vocab has the id " + std::to_string(v) + " for '" + token + "'");
    }
    vocab_[token] = v;
    max_id = std::max(max_id, v);
  }
  if (const std::string unk = optional_string(m, "unk_token"); !unk.empty()) {
    auto it = vocab_.find(unk);
    if (it == vocab_.end()) fail(source, "model.unk_token '" + unk + "' is not in model.vocab");
    unk_id_ = it->second;
  }
  // The id of token, a part or the result of the merge "left right".
  auto id_of = [&](const std::string& token, const std::string& left, const std::string& right) {
    auto it = vocab_.find(token);
    if (it == vocab_.end()) {
      fail(source,
           "model.merges entry '" + left + " " + right + "' needs '" + token + "', not in model.vocab");
    }
    return static_cast<int32_t>(it->second);
  };
  int32_t rank = 0;
  for (const auto& merge : m.value("merges", Json::array())) {
    std::string left, right;
    if (merge.is_string()) {
      const std::string s = merge.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) fail(source, "model.merges entry '" + s + "' is not 'left right'");
      left = s.substr(0, space);
      right = s.substr(space + 1);
    } else if (merge.is_array() && merge.size() == 2) {
      left = merge.at(0).get<std::string>();
      right = merge.at(1).get<std::string>();
    } else {
      fail(source, "model.merges entry " + merge.dump() + " is neither 'left right' nor [left, right]");
    }
    const int32_t left_id = id_of(left, left, right), right_id = id_of(right, left, right);
    merges_[pair_key(left_id, right_id)] = Merge{rank++, id_of(left + right, left, right)};
  }

  std::vector<AddedToken> raw_added, normalized_added;
  for (const auto& t : j.value("added_tokens", Json::array())) {
    if (!t.is_object() || !t.contains("id") || !t.at("id").is_number_integer()) {
      fail(source, "added_tokens has an entry without an integer 'id': " + t.dump());
    }
    AddedToken a = added_token_from_json(t, t.at("id").get<int64_t>(), source + ": added_tokens");
    if (a.id < 0)
      fail(source, "added_tokens has the id " + std::to_string(a.id) + " for '" + a.content + "'");
    max_id = std::max(max_id, a.id);
    a.match = a.normalized ? normalizer_.apply(a.content) : a.content;
    (a.normalized ? normalized_added : raw_added).push_back(std::move(a));
  }
  raw_added_ = AddedTokens(std::move(raw_added));
  normalized_added_ = AddedTokens(std::move(normalized_added));

  vocab_size_ = max_id + 1;
  token_of_id_.assign(static_cast<size_t>(vocab_size_), "");
  added_kind_.assign(static_cast<size_t>(vocab_size_), AddedKind::kNone);
  for (const auto& [token, id] : vocab_) token_of_id_[static_cast<size_t>(id)] = token;
  for (const auto* matcher : {&raw_added_, &normalized_added_}) {
    for (const auto& a : matcher->tokens()) {
      token_of_id_[static_cast<size_t>(a.id)] = a.match;  // the library decodes a token in its normal form
      added_kind_[static_cast<size_t>(a.id)] = a.special ? AddedKind::kSpecial : AddedKind::kPlain;
    }
  }

  const Json none;
  const Json& decoder = j.contains("decoder") ? j.at("decoder") : none;
  const std::string decoder_type = decoder.is_object() ? decoder.value("type", std::string("?")) : "";
  if (decoder.is_null()) {
    decoder_ = Decoder::kNone;
  } else if (decoder_type == "ByteLevel") {
    decoder_ = Decoder::kByteLevel;
  } else {
    fail(source, "decoder '" + decoder_type + "' is not supported (supported: ByteLevel, none)");
  }
}

// ---------------------------------------------------------------------------
// [SECTION] Encoding

std::vector<int64_t> BpeTokenizer::encode(std::string_view text) const {
  if (const size_t bad = unicode::first_invalid_utf8(text); bad != std::string_view::npos) {
    fail(source_, "cannot encode text that is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  std::vector<int64_t> ids;
  for (const auto& raw : raw_added_.cut(text)) {
    if (raw.id >= 0) {
      ids.push_back(raw.id);
      continue;
    }
    const std::string normalized = normalizer_.apply(text.substr(raw.begin, raw.end - raw.begin));
    for (const auto& seg : normalized_added_.cut(normalized)) {
      if (seg.id >= 0) {
        ids.push_back(seg.id);
      } else {
        encode_normalized(std::string_view(normalized).substr(seg.begin, seg.end - seg.begin), ids);
      }
    }
  }
  return ids;
}

void BpeTokenizer::encode_normalized(std::string_view text, std::vector<int64_t>& out) const {
  for (const auto& word : pretokenizer_.split(text)) encode_word(word, out);
}

const BpeTokenizer::Merge* BpeTokenizer::merge_of(int32_t left, int32_t right) const {
  auto it = merges_.find(pair_key(left, right));
  return it == merges_.end() ? nullptr : &it->second;
}

// word: one pre-token, its characters byte stand-ins.
void BpeTokenizer::encode_word(const std::string& word, std::vector<int64_t>& out) const {
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (auto it = cache_.find(word); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  std::vector<int64_t> ids;
  if (auto it = vocab_.find(word); ignore_merges_ && it != vocab_.end()) {
    ids.push_back(it->second);
  } else {
    // The symbols as a linked list; the heap holds candidate merges by (rank, position).
    struct Symbol {
      int32_t id;
      int32_t prev, next;  // -1 at the ends
      bool alive;
    };
    std::vector<Symbol> sym;
    for (size_t i = 0; i < word.size();) {
      const auto c = unicode::char_at(word, i);
      auto it = vocab_.find(word.substr(c.begin, c.end - c.begin));
      int64_t id;
      if (it != vocab_.end()) {
        id = it->second;
      } else if (unk_id_ >= 0) {
        id = unk_id_;
        if (fuse_unk_ && !sym.empty() && sym.back().id == unk_id_) {
          i = c.end;
          continue;
        }
      } else {
        fail(source_, "the vocabulary has no token for '" + word.substr(c.begin, c.end - c.begin) +
                          "' (a byte-level BPE needs all 256 bytes)");
      }
      const auto n = static_cast<int32_t>(sym.size());
      sym.push_back({static_cast<int32_t>(id), n - 1, -1, true});
      if (n > 0) sym[static_cast<size_t>(n - 1)].next = n;
      i = c.end;
    }
    struct Candidate {
      int32_t rank, pos;
      bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto consider = [&](int32_t pos) {
      if (pos < 0) return;
      const Symbol& s = sym[static_cast<size_t>(pos)];
      if (s.next < 0) return;
      if (const Merge* m = merge_of(s.id, sym[static_cast<size_t>(s.next)].id)) heap.push({m->rank, pos});
    };
    for (int32_t k = 0; k + 1 < static_cast<int32_t>(sym.size()); ++k) consider(k);
    while (!heap.empty()) {
      const Candidate top = heap.top();
      heap.pop();
      Symbol& s = sym[static_cast<size_t>(top.pos)];
      if (!s.alive || s.next < 0) continue;
      Symbol& right = sym[static_cast<size_t>(s.next)];
      const Merge* m = merge_of(s.id, right.id);
      if (m == nullptr || m->rank != top.rank) continue;  // stale: a neighbour changed since
      s.id = m->new_id;
      right.alive = false;
      s.next = right.next;
      if (s.next >= 0) sym[static_cast<size_t>(s.next)].prev = top.pos;
      consider(s.prev);
      consider(top.pos);
    }
    for (const auto& s : sym) {
      if (s.alive) ids.push_back(s.id);
    }
  }
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() > 100000) cache_.clear();
  cache_.emplace(word, std::move(ids));
}

std::vector<std::string> BpeTokenizer::pretokenize(std::string_view text) const {
  if (const size_t bad = unicode::first_invalid_utf8(text); bad != std::string_view::npos) {
    fail(source_, "cannot pre-tokenize text that is not valid UTF-8 (byte " + std::to_string(bad) + ")");
  }
  std::vector<std::string> out;
  for (const auto& word : pretokenizer_.split(normalizer_.apply(text))) {
    std::string bytes;
    for (size_t i = 0; i < word.size();) {
      const auto c = unicode::char_at(word, i);
      bytes += static_cast<char>(byte_level_byte(c.cp));
      i = c.end;
    }
    out.push_back(std::move(bytes));
  }
  return out;
}

// ---------------------------------------------------------------------------
// [SECTION] Decoding

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  std::string out;
  bool first = true;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size_ || token_of_id_[static_cast<size_t>(id)].empty()) {
      fail(source_, "cannot decode id " + std::to_string(id) + ": no token has it");
    }
    if (skip_special_tokens && added_kind_[static_cast<size_t>(id)] == AddedKind::kSpecial) continue;
    const std::string& token = token_of_id_[static_cast<size_t>(id)];
    if (decoder_ == Decoder::kNone) {
      if (!first) out += ' ';
      out += token;
      first = false;
      continue;
    }
    // ByteLevel: a token all of byte stand-ins gives those bytes, any other token its own text.
    std::string bytes;
    bool all_mapped = true;
    for (size_t i = 0; i < token.size() && all_mapped;) {
      const auto c = unicode::char_at(token, i);
      const int b = byte_level_byte(c.cp);
      if (b < 0) all_mapped = false;
      bytes += static_cast<char>(b);
      i = c.end;
    }
    out += all_mapped ? bytes : token;
  }
  return decoder_ == Decoder::kByteLevel ? unicode::valid_utf8_lossy(out) : out;
}

std::optional<int64_t> BpeTokenizer::token_id(std::string_view token) const {
  for (const auto* matcher : {&raw_added_, &normalized_added_}) {
    if (const AddedToken* a = matcher->find(token)) return a->id;
  }
  auto it = vocab_.find(std::string(token));
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeTokenizer::set_special_tokens(const std::string& bos, const std::string& eos, const std::string& pad,
                                      const std::string& source) {
  auto resolve = [&](const std::string& name, const char* setting) -> int64_t {
    if (name.empty()) return -1;
    auto id = token_id(name);
    if (!id)
      fail(source, std::string("'") + setting + "' is '" + name + "', which is not a token of " + source_);
    return *id;
  };
  special_ids_.bos = resolve(bos, "bos_token");
  special_ids_.eos = resolve(eos, "eos_token");
  special_ids_.pad = resolve(pad, "pad_token");
}

}  // namespace rlwb::workers::model
