// Final-answer extraction (see extract.h).
#include "rewards/math/extract.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "rewards/math/normalize.h"

namespace rlwb::rewards {
namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }
bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Content of the brace group whose '{' is at open, honouring \{ and \}.
std::optional<std::string_view> brace_group(std::string_view text, size_t open) {
  int depth = 0;
  for (size_t i = open; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\\' && i + 1 < text.size()) {
      ++i;  // an escaped character never opens or closes
      continue;
    }
    if (c == '{') ++depth;
    if (c == '}' && --depth == 0) return text.substr(open + 1, i - open - 1);
  }
  return std::nullopt;
}

// The argument of \boxed at pos (just after the command name).
std::optional<std::string_view> boxed_argument(std::string_view text, size_t pos) {
  while (pos < text.size() && is_space(text[pos])) ++pos;
  if (pos < text.size() && text[pos] == '{') return brace_group(text, pos);
  // "\boxed 5": one token, up to a space or the closing '$'.
  size_t end = pos;
  while (end < text.size() && !is_space(text[end]) && text[end] != '$') ++end;
  if (end == pos) return std::nullopt;
  return text.substr(pos, end - pos);
}

std::string_view rest_of_line(std::string_view text, size_t pos) {
  size_t end = text.find('\n', pos);
  return text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos);
}

// Position just after the last occurrence of needle (case-insensitive), or npos.
size_t after_last(const std::string& lowered, std::string_view needle) {
  size_t at = lowered.rfind(needle);
  return at == std::string::npos ? std::string::npos : at + needle.size();
}

// What follows "Answer:" or "final answer is": strip markdown emphasis, the
// Minerva sign-off, and take the inside of the first $...$ when there is one.
std::string clean_answer_line(std::string_view line) {
  std::string s(trim(line));
  for (std::string_view sign_off : {"I hope it is correct.", "I hope it is correct"}) {
    size_t at = s.find(sign_off);
    if (at != std::string::npos) s.erase(at);
  }
  s.erase(std::remove(s.begin(), s.end(), '*'), s.end());
  std::string_view v = trim(s);
  if (!v.empty() && v.front() == ':') v = trim(v.substr(1));
  // "5. Then we ..." ends at the sentence (a decimal point has no space after it).
  if (size_t stop = v.find(". "); stop != std::string_view::npos) v = v.substr(0, stop);
  size_t open = v.find('$');
  if (open != std::string_view::npos) {
    size_t inner = open + 1;
    if (inner < v.size() && v[inner] == '$') ++inner;  // $$...$$
    size_t close = v.find('$', inner);
    if (close != std::string_view::npos && close > inner) return std::string(v.substr(inner, close - inner));
  }
  return std::string(v);
}

bool is_math_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "sin",  "cos",  "tan",  "sec", "csc",   "cot",      "log", "exp", "sqrt", "arcsin", "arccos", "arctan",
      "sinh", "cosh", "tanh", "inf", "infty", "infinity", "and", "or",  "cm",   "mm",     "km",     "deg"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

// One short line with no prose: every run of three or more letters, and every
// two-letter word standing alone, is a LaTeX command name, inside a command's
// braces, or a math word.
bool reads_as_formula(std::string_view text) {
  if (text.empty() || text.size() > 160 || text.find('\n') != std::string_view::npos) return false;
  if (std::all_of(text.begin(), text.end(), is_alpha)) return true;  // one word: "Monday"
  for (size_t i = 0; i < text.size();) {
    if (text[i] == '\\') {  // a command: skip its name, and the braces of \text and friends
      size_t j = i + 1;
      while (j < text.size() && is_alpha(text[j])) ++j;
      std::string_view name = text.substr(i + 1, j - i - 1);
      if ((name == "text" || name == "mathrm" || name == "textbf" || name == "mbox" ||
           name == "operatorname" || name == "begin" || name == "end") &&
          j < text.size() && text[j] == '{') {
        auto group = brace_group(text, j);
        if (!group) return false;
        j += group->size() + 2;
      }
      i = std::max(j, i + 1);
      continue;
    }
    if (is_alpha(text[i])) {
      size_t j = i;
      while (j < text.size() && is_alpha(text[j])) ++j;
      std::string word = lower(text.substr(i, j - i));
      bool standalone = (i == 0 || is_space(text[i - 1])) && (j == text.size() || is_space(text[j]));
      // "so", "is", "it" standing alone are prose; "xy" inside 2xy is a product
      if ((word.size() >= 3 || (word.size() == 2 && standalone)) && !is_math_word(word)) return false;
      i = j;
      continue;
    }
    ++i;
  }
  return true;
}

std::optional<std::string> last_number(std::string_view text) {
  std::optional<std::string> found;
  for (size_t i = 0; i < text.size();) {
    if (!is_digit(text[i])) {
      ++i;
      continue;
    }
    size_t start = i;
    if (start > 0 && text[start - 1] == '-') --start;
    if (start > 0 && text[start - 1] == '.') start = i;  // ".5" stays "5" after a word's period
    while (i < text.size() && (is_digit(text[i]) || ((text[i] == ',' || text[i] == '.') &&
                                                     i + 1 < text.size() && is_digit(text[i + 1]))))
      ++i;
    found = std::string(text.substr(start, i - start));
  }
  return found;
}

}  // namespace

const char* answer_source_name(AnswerSource source) {
  switch (source) {
    case AnswerSource::kNone:
      return "none";
    case AnswerSource::kBoxed:
      return "boxed";
    case AnswerSource::kHashes:
      return "hashes";
    case AnswerSource::kAnswerLine:
      return "answer_line";
    case AnswerSource::kWholeText:
      return "whole_text";
    case AnswerSource::kLastNumber:
      return "last_number";
    case AnswerSource::kLastLatex:
      return "last_latex";
  }
  return "none";
}

namespace {

// Where the last complete box starts (npos: none), and its content.
size_t last_boxed_at(std::string_view text, std::string* content) {
  size_t search_end = text.size();
  while (true) {
    size_t boxed = text.rfind("\\boxed", search_end);
    size_t fbox = text.rfind("\\fbox", search_end);
    size_t at = boxed == std::string_view::npos  ? fbox
                : fbox == std::string_view::npos ? boxed
                                                 : std::max(boxed, fbox);
    if (at == std::string_view::npos) return at;
    size_t name_end = at + (at == boxed ? 6 : 5);
    // \boxedfoo is another command; a box that never closes is skipped.
    if (!(name_end < text.size() && is_alpha(text[name_end]))) {
      if (auto arg = boxed_argument(text, name_end)) {
        *content = std::string(trim(*arg));
        return at;
      }
    }
    if (at == 0) return std::string_view::npos;
    search_end = at - 1;
  }
}

}  // namespace

bool find_last_boxed(std::string_view text, std::string* content) {
  return last_boxed_at(text, content) != std::string_view::npos;
}

std::vector<std::string> find_all_boxed(std::string_view text) {
  std::vector<std::string> found;
  std::string content;
  for (size_t at; (at = last_boxed_at(text, &content)) != std::string_view::npos; text = text.substr(0, at))
    found.push_back(content);
  std::reverse(found.begin(), found.end());
  return found;
}

ExtractedAnswer extract_answer(std::string_view response, const ExtractOptions& options) {
  std::string boxed;
  if (find_last_boxed(response, &boxed)) return {boxed, AnswerSource::kBoxed};

  size_t hashes = response.rfind("####");
  if (hashes != std::string_view::npos) {
    std::string_view line = trim(rest_of_line(response, hashes + 4));
    if (!line.empty()) return {clean_answer_line(line), AnswerSource::kHashes};
  }

  std::string lowered = lower(response);
  size_t after = std::string::npos;
  for (std::string_view marker : {"answer is", "answer:", "answer :"}) {
    size_t at = after_last(lowered, marker);
    if (at != std::string::npos && (after == std::string::npos || at > after)) after = at;
  }
  if (after != std::string::npos) {
    std::string answer = clean_answer_line(rest_of_line(response, after));
    if (!answer.empty()) return {answer, AnswerSource::kAnswerLine};
  }

  std::string_view whole = trim(response);
  // "20 dollars" is a formula once its unit is gone.
  if (!whole.empty() && (options.whole_text_always || reads_as_formula(whole) ||
                         (whole.size() <= 160 && reads_as_formula(normalize_answer(whole)))))
    return {std::string(whole), AnswerSource::kWholeText};

  if (options.last_number_fallback) {
    if (auto number = last_number(response)) return {*number, AnswerSource::kLastNumber};
  }
  return {};
}

}  // namespace rlwb::rewards
