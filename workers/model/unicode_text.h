// Unicode text as the Hugging Face tokenizer (bpe_tokenizer.h) needs it:
// walking and checking UTF-8, the character properties that added tokens
// test (white space for lstrip/rstrip, word characters for single_word),
// the four normal forms (through ICU), and the lossy UTF-8 conversion that
// ends a byte-level decode. The properties follow what the Rust
// `tokenizers` library uses: White_Space for `char::is_whitespace`, and for
// a word character Unicode regex `\w` (Alphabetic, Mark, Decimal_Number,
// Connector_Punctuation, Join_Control). Their Unicode version is ICU's.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace rlwb::workers::model::unicode {

// One code point of a UTF-8 string and its bytes [begin, end).
struct Utf8Char {
  char32_t cp;
  size_t begin, end;
};

// The code point starting at byte i of s, which must be valid UTF-8 there.
Utf8Char char_at(std::string_view s, size_t i);
// The last code point of a non-empty valid UTF-8 string.
Utf8Char last_char(std::string_view s);

// The byte offset of the first ill-formed UTF-8 sequence, or npos.
size_t first_invalid_utf8(std::string_view s);

// bytes as UTF-8, each maximal ill-formed subpart replaced by U+FFFD (what
// Rust's String::from_utf8_lossy does).
std::string valid_utf8_lossy(std::string_view bytes);

void append_utf8(std::string& out, char32_t cp);

bool is_white_space(char32_t cp);
bool is_word_char(char32_t cp);

enum class NormalForm { kNfc, kNfd, kNfkc, kNfkd };

// s (valid UTF-8) in the normal form; throws std::runtime_error when ICU fails.
std::string normalize(std::string_view s, NormalForm form);

}  // namespace rlwb::workers::model::unicode
