// HfPretokenizer: the `pre_tokenizer` of a Hugging Face tokenizer.json, run
// by BpeTokenizer (bpe_tokenizer.h) on the normalized text between added
// tokens. Supported steps, alone or in a Sequence:
//   - Split {pattern: {Regex: ...} | {String: ...}, behavior, invert}: the
//     pattern through PCRE2 (UTF mode, Unicode properties), any pattern,
//     with every behavior (Removed, Isolated, MergedWithPrevious,
//     MergedWithNext, Contiguous) and invert;
//   - ByteLevel {add_prefix_space, use_regex}: a space before each piece
//     that does not start with one, GPT-2's pattern when use_regex, then
//     each byte written as GPT-2's printable stand-in character.
// Any other step is refused by name when loading.
//
// The Rust library compiles patterns with Oniguruma; where Oniguruma and
// PCRE2 read an escape differently, oniguruma_to_pcre2() rewrites it, so
// that `\s`, `\w`, `\b` and `\h` mean what they mean in tokenizers. The
// Unicode version of \p{..} is that of the system's PCRE2.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::workers::model {

class HfPretokenizer {
 public:
  // spec: the value of tokenizer.json's "pre_tokenizer"; source names the
  // file in the ModelError thrown for an unsupported step or a pattern
  // PCRE2 does not compile.
  HfPretokenizer(const nlohmann::json& spec, const std::string& source);
  ~HfPretokenizer();
  HfPretokenizer(HfPretokenizer&&) noexcept;
  HfPretokenizer& operator=(HfPretokenizer&&) noexcept;

  // The pre-tokens of one piece of valid UTF-8 text, in order. After a
  // ByteLevel step their characters are byte stand-ins (byte_level_char).
  std::vector<std::string> split(std::string_view text) const;
  bool has_byte_level() const { return has_byte_level_; }

 private:
  struct Step;
  std::vector<Step> steps_;
  bool has_byte_level_ = false;
};

// GPT-2's byte <-> printable character table: the UTF-8 of byte b's
// stand-in, and the byte a code point stands for (-1 for none).
const std::string& byte_level_char(uint8_t b);
int byte_level_byte(char32_t cp);

// An Oniguruma (Ruby syntax) pattern written for PCRE2 with UTF and UCP:
// \s \S (White_Space), \w \W \b \B (letters, marks, numbers, connector
// punctuation), \h \H (hex digits) and \uHHHH are rewritten, everything
// else is kept. Throws std::invalid_argument for what has no rewrite
// (a negated class escape inside [...], nested classes, &&).
std::string oniguruma_to_pcre2(std::string_view pattern);

}  // namespace rlwb::workers::model
