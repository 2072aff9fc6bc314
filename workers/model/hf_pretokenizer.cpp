#include "workers/model/hf_pretokenizer.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <array>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <unordered_map>

#include "workers/model/model_error.h"
#include "workers/model/unicode_text.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::json;

// ---------------------------------------------------------------------------
// [SECTION] GPT-2's byte <-> printable character table

struct ByteTable {
  std::array<std::string, 256> char_of_byte;
  std::unordered_map<char32_t, uint8_t> byte_of_char;
  ByteTable() {
    char32_t next = 256;  // bytes that are not printable get 256, 257, ... in order
    for (uint32_t b = 0; b < 256; ++b) {
      const bool printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
      const char32_t cp = printable ? b : next++;
      unicode::append_utf8(char_of_byte[b], cp);
      byte_of_char[cp] = static_cast<uint8_t>(b);
    }
  }
};

const ByteTable& byte_table() {
  static const ByteTable table;
  return table;
}

// ---------------------------------------------------------------------------
// [SECTION] Oniguruma escapes in PCRE2

// Oniguruma's \s: the White_Space property. PCRE2's also takes U+180E.
constexpr const char* kSpaceSet =
    "\\x{9}-\\x{d}\\x{20}\\x{85}\\x{a0}\\x{1680}\\x{2000}-\\x{200a}\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{"
    "3000}";
// Oniguruma's \w: Alphabetic, Mark, Decimal_Number, Connector_Punctuation,
// and the Latin-1 numbers ² ³ ¹ ¼ ½ ¾ (measured on tokenizers 0.23). PCRE2's
// is Letter, Number and '_'.
constexpr const char* kWordSet = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\x{b2}\\x{b3}\\x{b9}\\x{bc}-\\x{be}";
constexpr const char* kHexSet = "0-9a-fA-F";  // Oniguruma's \h; PCRE2's is horizontal space

bool is_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// ---------------------------------------------------------------------------
// [SECTION] PCRE2

struct CodeDeleter {
  void operator()(pcre2_code* c) const { pcre2_code_free(c); }
};
struct MatchDataDeleter {
  void operator()(pcre2_match_data* m) const { pcre2_match_data_free(m); }
};

std::string pcre2_message(int code) {
  std::array<PCRE2_UCHAR, 256> buf{};
  pcre2_get_error_message(code, buf.data(), buf.size());
  return reinterpret_cast<const char*>(buf.data());
}

class Regex {
 public:
  // literal: match the pattern's text as is (a Split's {String: ...}).
  Regex(const std::string& pattern, bool literal, const std::string& source) {
    std::string translated = pattern;
    if (!literal) {
      try {
        translated = oniguruma_to_pcre2(pattern);
      } catch (const std::invalid_argument& e) {
        throw ModelError(source + ": pre_tokenizer pattern '" + pattern + "': " + e.what());
      }
    }
    // Oniguruma's Ruby syntax: ^ and $ are line anchors.
    const uint32_t options = PCRE2_UTF | (literal ? PCRE2_LITERAL : PCRE2_UCP | PCRE2_MULTILINE);
    int error = 0;
    PCRE2_SIZE offset = 0;
    code_.reset(pcre2_compile(reinterpret_cast<PCRE2_SPTR>(translated.data()), translated.size(), options,
                              &error, &offset, nullptr));
    if (!code_) {
      throw ModelError(source + ": pre_tokenizer pattern '" + pattern + "' does not compile with PCRE2 (" +
                       pcre2_message(error) + " at offset " + std::to_string(offset) + " of '" + translated +
                       "')");
    }
    pcre2_jit_compile(code_.get(), PCRE2_JIT_COMPLETE);  // falls back to the interpreter where JIT is missing
  }

  // Every match in text, in order, empty ones included; text is valid UTF-8.
  std::vector<std::pair<size_t, size_t>> find_all(std::string_view text) const {
    std::unique_ptr<pcre2_match_data, MatchDataDeleter> md(
        pcre2_match_data_create_from_pattern(code_.get(), nullptr));
    std::vector<std::pair<size_t, size_t>> out;
    const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    size_t start = 0;
    uint32_t retry = 0;  // after an empty match: a non-empty one at the same place first
    while (start <= text.size()) {
      const int rc = pcre2_match(code_.get(), subject, text.size(), start, retry | PCRE2_NO_UTF_CHECK,
                                 md.get(), nullptr);
      if (rc == PCRE2_ERROR_NOMATCH) {
        if (retry == 0 || start >= text.size()) break;
        start = unicode::char_at(text, start).end;  // step over one character
        retry = 0;
        continue;
      }
      if (rc < 0) throw ModelError("pre_tokenizer pattern: PCRE2 match failed: " + pcre2_message(rc));
      const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(md.get());
      out.emplace_back(ov[0], ov[1]);
      retry = ov[0] == ov[1] ? (PCRE2_NOTEMPTY_ATSTART | PCRE2_ANCHORED) : 0;
      start = ov[1];
    }
    return out;
  }

 private:
  std::unique_ptr<pcre2_code, CodeDeleter> code_;
};

// ---------------------------------------------------------------------------
// [SECTION] Split behaviors

enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior behavior_named(const std::string& name, const std::string& source) {
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "Isolated") return Behavior::kIsolated;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  throw ModelError(source + ": pre_tokenizer Split behavior '" + name +
                   "' is unknown (Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous)");
}

struct Piece {
  size_t begin, end;
  bool match;
};

// The pieces of text cut at the matches, joined as behavior says.
std::vector<Piece> split_pieces(std::string_view text, const Regex& re, Behavior behavior, bool invert) {
  std::vector<Piece> all;
  size_t last = 0;
  for (const auto& [b, e] : re.find_all(text)) {
    if (last < b) all.push_back({last, b, invert});
    all.push_back({b, e, !invert});
    last = e;
  }
  if (last < text.size()) all.push_back({last, text.size(), invert});

  std::vector<Piece> out;
  switch (behavior) {
    case Behavior::kIsolated:
      out = std::move(all);
      break;
    case Behavior::kRemoved:
      for (const auto& p : all) {
        if (!p.match) out.push_back(p);
      }
      break;
    case Behavior::kContiguous:
      for (const auto& p : all) {
        if (p.match && !out.empty() && out.back().match) {
          out.back().end = p.end;
        } else {
          out.push_back(p);
        }
      }
      break;
    case Behavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const auto& p : all) {
        if (p.match && !previous_match && !out.empty()) {
          out.back().end = p.end;
        } else {
          out.push_back(p);
        }
        previous_match = p.match;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool next_match = false;  // walking from the end
      for (auto it = all.rbegin(); it != all.rend(); ++it) {
        if (it->match && !next_match && !out.empty()) {
          out.back().begin = it->begin;
        } else {
          out.push_back(*it);
        }
        next_match = it->match;
      }
      std::reverse(out.begin(), out.end());
      break;
    }
  }
  return out;
}

[[noreturn]] void refuse_step(const std::string& type, const std::string& source) {
  throw ModelError(source + ": pre_tokenizer '" + type +
                   "' is not supported (supported: Split, ByteLevel and a Sequence of them)");
}

const std::string& gpt2_pattern() {
  static const std::string p =
      R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";
  return p;
}

}  // namespace

// ---------------------------------------------------------------------------
// [SECTION] oniguruma_to_pcre2

std::string oniguruma_to_pcre2(std::string_view p) {
  std::string out;
  bool in_class = false;
  size_t class_start = 0;  // where the current class's items begin (after '[' and '^')
  for (size_t i = 0; i < p.size(); ++i) {
    const char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      const char n = p[++i];
      auto set = [&](const char* items, bool negated) {
        if (in_class && negated) {
          throw std::invalid_argument(std::string("\\") + n + " inside [...] has no PCRE2 rewrite");
        }
        if (in_class) {
          out += items;
        } else {
          out += negated ? "[^" : "[";
          out += items;
          out += ']';
        }
      };
      switch (n) {
        case 's':
        case 'S':
          set(kSpaceSet, n == 'S');
          break;
        case 'w':
        case 'W':
          set(kWordSet, n == 'W');
          break;
        case 'h':
        case 'H':
          set(kHexSet, n == 'H');
          break;
        case 'b':
        case 'B':
          if (in_class) {
            out += "\\b";  // backspace in a class, in both
          } else {
            // A change between word and not word, in Oniguruma's sense of word.
            const std::string w = std::string("[") + kWordSet + "]";
            std::string boundary = "(?:(?<=";
            boundary.append(w).append(")(?!").append(w).append(")|(?<!").append(w).append(")(?=").append(w);
            boundary += "))";
            out += n == 'b' ? boundary : "(?!" + boundary + ")";
          }
          break;
        case 'u':
          if (i + 4 < p.size() && is_hex(p[i + 1]) && is_hex(p[i + 2]) && is_hex(p[i + 3]) &&
              is_hex(p[i + 4])) {
            out += "\\x{" + std::string(p.substr(i + 1, 4)) + "}";
            i += 4;
          } else {
            throw std::invalid_argument("\\u must be followed by four hex digits");
          }
          break;
        case 'Q': {  // quoted up to \E, as is
          const size_t end = p.find("\\E", i + 1);
          const size_t stop = end == std::string_view::npos ? p.size() : end + 2;
          out += "\\Q";
          out += p.substr(i + 1, stop - (i + 1));
          i = stop - 1;
          break;
        }
        default:
          out += '\\';
          out += n;
      }
      continue;
    }
    if (!in_class && c == '[') {
      in_class = true;
      out += c;
      if (i + 1 < p.size() && p[i + 1] == '^') out += p[++i];
      class_start = i + 1;
      continue;
    }
    if (in_class) {
      if (c == ']' && i != class_start) {
        in_class = false;
      } else if (c == '[') {
        if (i + 1 < p.size() && p[i + 1] == ':') {  // a POSIX class [:alpha:], copied whole
          const size_t end = p.find(":]", i + 2);
          if (end == std::string_view::npos) throw std::invalid_argument("unterminated [: :] class");
          out += p.substr(i, end + 2 - i);
          i = end + 1;
          continue;
        }
        throw std::invalid_argument("nested character classes have no PCRE2 rewrite");
      } else if (c == '&' && i + 1 < p.size() && p[i + 1] == '&') {
        throw std::invalid_argument("class intersection (&&) has no PCRE2 rewrite");
      }
    }
    out += c;
  }
  return out;
}

// ---------------------------------------------------------------------------
// [SECTION] HfPretokenizer

struct HfPretokenizer::Step {
  enum class Kind { kSplit, kByteLevel } kind;
  std::shared_ptr<const Regex> regex;  // Split's pattern, or ByteLevel's GPT-2 pattern when use_regex
  Behavior behavior = Behavior::kIsolated;
  bool invert = false;
  bool add_prefix_space = false;
};

HfPretokenizer::HfPretokenizer(const Json& spec, const std::string& source) {
  std::vector<Json> flat;
  auto flatten = [&](auto&& self, const Json& s) -> void {
    if (s.is_object() && s.value("type", std::string()) == "Sequence") {
      for (const auto& inner : s.value("pretokenizers", Json::array())) self(self, inner);
    } else {
      flat.push_back(s);
    }
  };
  flatten(flatten, spec);
  for (const auto& s : flat) {
    const std::string type = s.is_object() ? s.value("type", std::string("?")) : "?";
    Step step;
    if (type == "Split") {
      step.kind = Step::Kind::kSplit;
      const Json pattern = s.value("pattern", Json::object());
      if (pattern.contains("Regex")) {
        step.regex = std::make_shared<Regex>(pattern.at("Regex").get<std::string>(), false, source);
      } else if (pattern.contains("String")) {
        step.regex = std::make_shared<Regex>(pattern.at("String").get<std::string>(), true, source);
      } else {
        throw ModelError(source +
                         ": pre_tokenizer Split needs a pattern {\"Regex\": ...} or {\"String\": ...}");
      }
      step.behavior = behavior_named(s.value("behavior", std::string("?")), source);
      step.invert = s.value("invert", false);
    } else if (type == "ByteLevel") {
      step.kind = Step::Kind::kByteLevel;
      step.add_prefix_space = s.value("add_prefix_space", true);
      if (s.value("use_regex", true)) {
        static const auto gpt2 = std::make_shared<Regex>(gpt2_pattern(), false, "GPT-2's pattern");
        step.regex = gpt2;
      }
      has_byte_level_ = true;
    } else {
      refuse_step(type, source);
    }
    steps_.push_back(std::move(step));
  }
}

HfPretokenizer::~HfPretokenizer() = default;
HfPretokenizer::HfPretokenizer(HfPretokenizer&&) noexcept = default;
HfPretokenizer& HfPretokenizer::operator=(HfPretokenizer&&) noexcept = default;

std::vector<std::string> HfPretokenizer::split(std::string_view text) const {
  std::vector<std::string> pieces;
  if (!text.empty()) pieces.emplace_back(text);
  const ByteTable& table = byte_table();
  for (const auto& step : steps_) {
    std::vector<std::string> next;
    for (auto& piece : pieces) {
      if (step.kind == Step::Kind::kByteLevel && step.add_prefix_space && piece.front() != ' ') {
        piece.insert(piece.begin(), ' ');
      }
      std::vector<std::string> parts;
      if (step.regex) {
        for (const auto& p : split_pieces(piece, *step.regex, step.behavior, step.invert)) {
          if (p.end > p.begin) parts.push_back(piece.substr(p.begin, p.end - p.begin));
        }
      } else {
        parts.push_back(std::move(piece));
      }
      if (step.kind == Step::Kind::kByteLevel) {
        for (auto& part : parts) {
          std::string mapped;
          mapped.reserve(part.size() * 2);
          for (char ch : part) mapped += table.char_of_byte[static_cast<unsigned char>(ch)];
          part = std::move(mapped);
        }
      }
      for (auto& part : parts) next.push_back(std::move(part));
    }
    pieces = std::move(next);
  }
  return pieces;
}

const std::string& byte_level_char(uint8_t b) { return byte_table().char_of_byte[b]; }

int byte_level_byte(char32_t cp) {
  const auto& map = byte_table().byte_of_char;
  auto it = map.find(cp);
  return it == map.end() ? -1 : it->second;
}

}  // namespace rlwb::workers::model
