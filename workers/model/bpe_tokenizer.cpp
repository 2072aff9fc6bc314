#include "workers/model/bpe_tokenizer.h"

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------
// [SECTION] UTF-8 and GPT-2's byte <-> printable character table

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// One decoded code point and the bytes it came from. Invalid UTF-8 decodes
// byte by byte (as U+FFFD-like "other" characters) so no input is lost.
struct CodePoint {
  uint32_t cp;
  size_t begin, end;
};

std::vector<CodePoint> decode_utf8(std::string_view s) {
  std::vector<CodePoint> out;
  out.reserve(s.size());
  size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    size_t len = b < 0x80 ? 1 : (b >> 5) == 0x6 ? 2 : (b >> 4) == 0xE ? 3 : (b >> 3) == 0x1E ? 4 : 0;
    bool ok = len > 0 && i + len <= s.size();
    uint32_t cp = len == 1 ? b : len == 2 ? (b & 0x1F) : len == 3 ? (b & 0x0F) : (b & 0x07);
    for (size_t k = 1; ok && k < len; ++k) {
      const auto c = static_cast<unsigned char>(s[i + k]);
      if ((c & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (c & 0x3F);
    }
    if (!ok) {
      out.push_back({0xFFFD, i, i + 1});
      i += 1;
    } else {
      out.push_back({cp, i, i + len});
      i += len;
    }
  }
  return out;
}

struct ByteTable {
  std::array<std::string, 256> char_of_byte;  // byte -> UTF-8 of its printable stand-in
  std::unordered_map<uint32_t, uint8_t> byte_of_cp;
  ByteTable() {
    uint32_t next = 256;
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      const uint32_t cp = printable ? b : next++;
      append_utf8(char_of_byte[b], cp);
      byte_of_cp[cp] = static_cast<uint8_t>(b);
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

// ---------------------------------------------------------------------------
// [SECTION] Approximate Unicode classes (see the header for what is exact)

enum class CharClass { kLetter, kNumber, kSpace, kOther };

bool in(uint32_t cp, uint32_t lo, uint32_t hi) { return cp >= lo && cp <= hi; }

bool is_space(uint32_t cp) {
  return in(cp, 0x09, 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         in(cp, 0x2000, 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F || cp == 0x205F ||
         cp == 0x3000;
}

bool is_number(uint32_t cp) {
  if (cp < 0x80) return in(cp, '0', '9');
  static constexpr std::pair<uint32_t, uint32_t> kRanges[] = {
      {0xB2, 0xB3},     {0xB9, 0xB9},     {0xBC, 0xBE},     {0x660, 0x669},   {0x6F0, 0x6F9},
      {0x7C0, 0x7C9},   {0x966, 0x96F},   {0x9E6, 0x9EF},   {0xA66, 0xA6F},   {0xAE6, 0xAEF},
      {0xB66, 0xB6F},   {0xBE6, 0xBF2},   {0xC66, 0xC6F},   {0xCE6, 0xCEF},   {0xD66, 0xD78},
      {0xE50, 0xE59},   {0xED0, 0xED9},   {0xF20, 0xF33},   {0x1040, 0x1049}, {0x17E0, 0x17E9},
      {0x1810, 0x1819}, {0x2070, 0x2070}, {0x2074, 0x2079}, {0x2080, 0x2089}, {0x2150, 0x2182},
      {0x2185, 0x2189}, {0x2460, 0x249B}, {0x24EA, 0x24FF}, {0x2776, 0x2793}, {0x3007, 0x3007},
      {0x3021, 0x3029}, {0x3038, 0x303A}, {0x3192, 0x3195}, {0x3220, 0x3229}, {0x3248, 0x324F},
      {0x3251, 0x325F}, {0x3280, 0x3289}, {0x32B1, 0x32BF}, {0xFF10, 0xFF19}, {0x1D7CE, 0x1D7FF}};
  for (const auto& [lo, hi] : kRanges) {
    if (in(cp, lo, hi)) return true;
  }
  return false;
}

// Punctuation, symbols, marks and format characters outside ASCII.
bool is_other(uint32_t cp) {
  if (in(cp, 0x80, 0xBF)) return cp != 0xAA && cp != 0xB5 && cp != 0xBA;  // ª µ º are letters
  static constexpr std::pair<uint32_t, uint32_t> kRanges[] = {
      {0xD7, 0xD7},      {0xF7, 0xF7},     {0x2C2, 0x2C5},   {0x2D2, 0x2DF},   {0x2E5, 0x2EB},
      {0x2ED, 0x2ED},    {0x2EF, 0x36F},   {0x37E, 0x37E},   {0x384, 0x385},   {0x387, 0x387},
      {0x55A, 0x55F},    {0x589, 0x58A},   {0x5BE, 0x5BE},   {0x5C0, 0x5C0},   {0x5C3, 0x5C3},
      {0x5F3, 0x5F4},    {0x600, 0x60F},   {0x61B, 0x61F},   {0x64B, 0x65F},   {0x66A, 0x66D},
      {0x6D4, 0x6D4},    {0x964, 0x965},   {0x970, 0x970},   {0xE3F, 0xE3F},   {0x2000, 0x206F},
      {0x20A0, 0x20FF},  {0x2190, 0x245F}, {0x2500, 0x2775}, {0x2794, 0x2BFF}, {0x2E00, 0x2E7F},
      {0x3001, 0x3006},  {0x3008, 0x3020}, {0x302A, 0x3030}, {0x303D, 0x303F}, {0x30FB, 0x30FB},
      {0xFE00, 0xFE0F},  {0xFE10, 0xFE1F}, {0xFE30, 0xFE6F}, {0xFEFF, 0xFEFF}, {0xFF01, 0xFF0F},
      {0xFF1A, 0xFF20},  {0xFF3B, 0xFF40}, {0xFF5B, 0xFF65}, {0xFFE0, 0xFFFF}, {0x1F000, 0x1FAFF},
      {0xE0000, 0xE007F}};
  for (const auto& [lo, hi] : kRanges) {
    if (in(cp, lo, hi)) return true;
  }
  return false;
}

CharClass classify(uint32_t cp) {
  if (is_space(cp)) return CharClass::kSpace;
  if (is_number(cp)) return CharClass::kNumber;
  if (cp < 0x80) {
    return (in(cp, 'a', 'z') || in(cp, 'A', 'Z')) ? CharClass::kLetter : CharClass::kOther;
  }
  return is_other(cp) ? CharClass::kOther : CharClass::kLetter;
}

// ---------------------------------------------------------------------------
// [SECTION] The pre-tokenizer scanner

struct Scanner {
  std::vector<CodePoint> cps;
  std::vector<CharClass> cls;
  size_t n = 0;

  explicit Scanner(std::string_view text) : cps(decode_utf8(text)) {
    n = cps.size();
    cls.reserve(n);
    for (const auto& c : cps) cls.push_back(classify(c.cp));
  }
  bool is(size_t k, CharClass c) const { return k < n && cls[k] == c; }
  bool newline(size_t k) const { return k < n && (cps[k].cp == '\r' || cps[k].cp == '\n'); }
  uint32_t lower(size_t k) const {
    const uint32_t c = k < n ? cps[k].cp : 0;
    return in(c, 'A', 'Z') ? c + 32 : c;
  }
  size_t run(size_t k, CharClass c, size_t limit = std::numeric_limits<size_t>::max()) const {
    size_t j = k;
    while (j < n && cls[j] == c && j - k < limit) ++j;
    return j;
  }

  // 's 't 're 've 'm 'll 'd at k; returns the end or k when none.
  size_t contraction(size_t k, bool ignore_case) const {
    if (k >= n || cps[k].cp != '\'') return k;
    auto at = [&](size_t m) { return ignore_case ? lower(m) : (m < n ? cps[m].cp : 0); };
    const uint32_t a = at(k + 1), b = at(k + 2);
    if (a == 's' || a == 't' || a == 'm' || a == 'd') return k + 2;
    if ((a == 'r' && b == 'e') || (a == 'v' && b == 'e') || (a == 'l' && b == 'l')) return k + 3;
    return k;
  }

  // \s+(?!\S) | \s+ at k (k is white space).
  size_t spaces(size_t k) const {
    const size_t j = run(k, CharClass::kSpace);
    if (j == n || j - k == 1) return j;
    return j - 1;  // leave the last space to the word after it
  }

  size_t next_gpt2(size_t i) const {
    if (size_t j = contraction(i, false); j != i) return j;
    const size_t k = i + (cps[i].cp == ' ' ? 1 : 0);
    for (CharClass c : {CharClass::kLetter, CharClass::kNumber, CharClass::kOther}) {
      if (is(k, c)) return run(k, c);
    }
    if (is(i, CharClass::kSpace)) return spaces(i);
    return i + 1;
  }

  size_t next_qwen(size_t i, size_t max_digits) const {
    if (size_t j = contraction(i, true); j != i) return j;
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (is(i, CharClass::kLetter)) return run(i, CharClass::kLetter);
    if (!newline(i) && !is(i, CharClass::kNumber) && is(i + 1, CharClass::kLetter)) {
      return run(i + 1, CharClass::kLetter);
    }
    // \p{N}{1,K}
    if (is(i, CharClass::kNumber)) return run(i, CharClass::kNumber, max_digits == 0 ? SIZE_MAX : max_digits);
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    const size_t k = i + (cps[i].cp == ' ' ? 1 : 0);
    if (is(k, CharClass::kOther)) {
      size_t j = run(k, CharClass::kOther);
      while (newline(j)) ++j;
      return j;
    }
    if (is(i, CharClass::kSpace)) {
      // \s*[\r\n]+ : up to the last line break of the white-space run
      const size_t j = run(i, CharClass::kSpace);
      for (size_t m = j; m > i; --m) {
        if (newline(m - 1)) return m;
      }
      return spaces(i);
    }
    return i + 1;
  }
};

[[noreturn]] void fail(const std::string& source, const std::string& what) {
  throw ModelError(source + ": " + what);
}

std::string json_string(const Json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_object() && v.contains("content")) return v.at("content").get<std::string>();
  return "";
}

}  // namespace

// ---------------------------------------------------------------------------
// [SECTION] BpeTokenizer

BpeTokenizer::BpeTokenizer(const std::string& json_text, const std::string& source) : source_(source) {
  Json j;
  try {
    j = Json::parse(json_text);
  } catch (const Json::exception& e) {
    fail(source, std::string("not valid JSON: ") + e.what());
  }
  if (!j.contains("model") || !j.at("model").is_object()) fail(source, "missing 'model'");
  const Json& m = j.at("model");
  const std::string type = m.value("type", std::string("BPE"));
  if (type != "BPE") fail(source, "model.type is '" + type + "'; only byte-level BPE is supported");
  if (m.value("byte_fallback", false)) {
    fail(source, "model.byte_fallback is true (a SentencePiece-style BPE); only byte-level BPE is supported");
  }
  if (!m.contains("vocab") || !m.at("vocab").is_object()) fail(source, "missing 'model.vocab'");
  ignore_merges_ = m.value("ignore_merges", false);

  int64_t max_id = -1;
  for (const auto& [token, id] : m.at("vocab").items()) {
    vocab_[token] = id.get<int64_t>();
    max_id = std::max(max_id, id.get<int64_t>());
  }
  int64_t rank = 0;
  for (const auto& merge : m.value("merges", Json::array())) {
    std::pair<std::string, std::string> pair;
    if (merge.is_string()) {
      const std::string s = merge.get<std::string>();
      const size_t space = s.find(' ');
      if (space == std::string::npos) fail(source, "model.merges entry '" + s + "' is not 'left right'");
      pair = {s.substr(0, space), s.substr(space + 1)};
    } else if (merge.is_array() && merge.size() == 2) {
      pair = {merge.at(0).get<std::string>(), merge.at(1).get<std::string>()};
    } else {
      fail(source, "model.merges entry " + merge.dump() + " is neither 'left right' nor [left, right]");
    }
    merge_rank_.emplace(std::move(pair), rank++);
  }
  for (const auto& t : j.value("added_tokens", Json::array())) {
    AddedToken a{t.at("content").get<std::string>(), t.at("id").get<int64_t>(), t.value("special", false)};
    if (a.content.empty()) fail(source, "added_tokens has an empty token (id " + std::to_string(a.id) + ")");
    max_id = std::max(max_id, a.id);
    added_.push_back(std::move(a));
  }
  std::sort(added_.begin(), added_.end(),
            [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  vocab_size_ = max_id + 1;
  token_of_id_.assign(static_cast<size_t>(vocab_size_), "");
  added_kind_.assign(static_cast<size_t>(vocab_size_), AddedKind::kNone);
  for (const auto& [token, id] : vocab_) {
    if (id < 0) fail(source, "model.vocab has a negative id for '" + token + "'");
    token_of_id_[static_cast<size_t>(id)] = token;
  }
  for (const auto& a : added_) {
    token_of_id_[static_cast<size_t>(a.id)] = a.content;
    added_kind_[static_cast<size_t>(a.id)] = a.special ? AddedKind::kSpecial : AddedKind::kPlain;
  }

  // Normalizer: none, or NFC (taken as a no-op; see the header).
  if (j.contains("normalizer") && !j.at("normalizer").is_null()) {
    const std::string n = j.at("normalizer").value("type", std::string("?"));
    if (n != "NFC") fail(source, "normalizer '" + n + "' is not supported (supported: none, NFC)");
  }
  // Pre-tokenizer: ByteLevel(use_regex) or Sequence[Split(pattern), ByteLevel(use_regex=false)].
  if (!j.contains("pre_tokenizer") || j.at("pre_tokenizer").is_null()) {
    fail(source, "missing 'pre_tokenizer' (a byte-level BPE needs ByteLevel)");
  }
  std::vector<Json> steps;
  const Json& pre = j.at("pre_tokenizer");
  if (pre.value("type", std::string()) == "Sequence") {
    for (const auto& s : pre.at("pretokenizers")) steps.push_back(s);
  } else {
    steps.push_back(pre);
  }
  bool byte_level = false, have_pattern = false;
  for (const auto& s : steps) {
    const std::string t = s.value("type", std::string("?"));
    if (t == "ByteLevel") {
      byte_level = true;
      add_prefix_space_ = s.value("add_prefix_space", false);
      if (s.value("use_regex", true)) {
        pretokenizer_ = Pretokenizer::kGpt2;
        max_digits_ = 0;
        have_pattern = true;
      }
    } else if (t == "Split") {
      const std::string pattern =
          s.contains("pattern") ? json_string(s.at("pattern").value("Regex", Json(""))) : "";
      if (s.value("behavior", std::string()) != "Isolated" || s.value("invert", false)) {
        fail(source, "pre_tokenizer Split must have behavior 'Isolated' and invert false");
      }
      if (pattern.find("\\p{N}{1,3}") != std::string::npos &&
          pattern.find("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+") != std::string::npos) {
        pretokenizer_ = Pretokenizer::kQwen2Llama3;
        max_digits_ = 3;
      } else if (pattern.find("[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|") != std::string::npos) {
        pretokenizer_ = Pretokenizer::kQwen2Llama3;
        max_digits_ = 1;
      } else if (pattern.find(" ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+") != std::string::npos) {
        pretokenizer_ = Pretokenizer::kGpt2;
        max_digits_ = 0;
      } else {
        fail(source,
             "pre_tokenizer Split pattern '" + pattern +
                 "' is not one of the supported families (GPT-2, Qwen2, Llama 3; see bpe_tokenizer.h)");
      }
      have_pattern = true;
    } else {
      fail(source, "pre_tokenizer '" + t + "' is not supported (supported: ByteLevel, Split + ByteLevel)");
    }
  }
  if (!byte_level) fail(source, "pre_tokenizer has no ByteLevel step; only byte-level BPE is supported");
  if (!have_pattern) fail(source, "pre_tokenizer has neither a Split pattern nor ByteLevel use_regex");
}

std::vector<std::string> BpeTokenizer::pretokenize(std::string_view text) const {
  std::string buffer;
  if (add_prefix_space_ && !text.empty() && text.front() != ' ') {
    buffer = " " + std::string(text);
    text = buffer;
  }
  Scanner s(text);
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.n) {
    const size_t j = pretokenizer_ == Pretokenizer::kGpt2 ? s.next_gpt2(i)
                                                          : s.next_qwen(i, static_cast<size_t>(max_digits_));
    out.emplace_back(text.substr(s.cps[i].begin, s.cps[j - 1].end - s.cps[i].begin));
    i = j;
  }
  return out;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int64_t>& out) const {
  const std::string key(word);
  {
    std::lock_guard<std::mutex> lock(cache_mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) {
      out.insert(out.end(), it->second.begin(), it->second.end());
      return;
    }
  }
  const ByteTable& table = byte_table();
  std::vector<std::string> symbols;
  symbols.reserve(word.size());
  std::string whole;
  for (char c : word) {
    symbols.push_back(table.char_of_byte[static_cast<unsigned char>(c)]);
    whole += symbols.back();
  }
  std::vector<int64_t> ids;
  if (auto it = vocab_.find(whole); ignore_merges_ && it != vocab_.end()) {
    ids.push_back(it->second);
  } else {
    // Merge the adjacent pair of lowest rank, everywhere it occurs, until none is left.
    while (symbols.size() > 1) {
      int64_t best = std::numeric_limits<int64_t>::max();
      const std::pair<std::string, std::string>* best_pair = nullptr;
      for (size_t k = 0; k + 1 < symbols.size(); ++k) {
        auto it = merge_rank_.find({symbols[k], symbols[k + 1]});
        if (it != merge_rank_.end() && it->second < best) {
          best = it->second;
          best_pair = &it->first;
        }
      }
      if (best_pair == nullptr) break;
      std::vector<std::string> merged;
      merged.reserve(symbols.size());
      for (size_t k = 0; k < symbols.size(); ++k) {
        if (k + 1 < symbols.size() && symbols[k] == best_pair->first && symbols[k + 1] == best_pair->second) {
          merged.push_back(symbols[k] + symbols[k + 1]);
          ++k;
        } else {
          merged.push_back(symbols[k]);
        }
      }
      symbols.swap(merged);
    }
    for (const auto& sym : symbols) {
      auto it = vocab_.find(sym);
      if (it == vocab_.end())
        fail(source_, "the vocabulary has no token for '" + sym + "' (a byte-level BPE needs all 256 bytes)");
      ids.push_back(it->second);
    }
  }
  out.insert(out.end(), ids.begin(), ids.end());
  std::lock_guard<std::mutex> lock(cache_mutex_);
  if (cache_.size() > 100000) cache_.clear();
  cache_.emplace(key, std::move(ids));
}

std::vector<int64_t> BpeTokenizer::encode(std::string_view text) const {
  std::vector<int64_t> ids;
  size_t start = 0;  // start of the plain text not yet encoded
  auto flush = [&](size_t end) {
    if (end > start) {
      for (const auto& word : pretokenize(text.substr(start, end - start))) encode_word(word, ids);
    }
  };
  size_t i = 0;
  while (i < text.size()) {
    const AddedToken* hit = nullptr;
    for (const auto& a : added_) {  // longest first
      if (text.compare(i, a.content.size(), a.content) == 0) {
        hit = &a;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    flush(i);
    ids.push_back(hit->id);
    i += hit->content.size();
    start = i;
  }
  flush(text.size());
  return ids;
}

std::string BpeTokenizer::decode(const std::vector<int64_t>& ids, bool skip_special_tokens) const {
  const ByteTable& table = byte_table();
  std::string text;
  for (int64_t id : ids) {
    if (id < 0 || id >= vocab_size_ || token_of_id_[static_cast<size_t>(id)].empty()) {
      fail(source_, "cannot decode id " + std::to_string(id) + ": no token has it");
    }
    const std::string& token = token_of_id_[static_cast<size_t>(id)];
    const AddedKind kind = added_kind_[static_cast<size_t>(id)];
    if (kind != AddedKind::kNone) {
      if (!(skip_special_tokens && kind == AddedKind::kSpecial)) text += token;
      continue;
    }
    for (const auto& c : decode_utf8(token)) {
      auto it = table.byte_of_cp.find(c.cp);
      if (it == table.byte_of_cp.end()) {
        text.append(token, c.begin, c.end - c.begin);  // not byte-mapped: keep as is
      } else {
        text += static_cast<char>(it->second);
      }
    }
  }
  return text;
}

std::optional<int64_t> BpeTokenizer::token_id(std::string_view token) const {
  for (const auto& a : added_) {
    if (a.content == token) return a.id;
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
