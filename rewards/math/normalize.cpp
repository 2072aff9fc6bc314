// Answer normalisation (see normalize.h). Each rule is one small function on
// the whole string; answers are short, so clarity wins over a single pass.
#include "rewards/math/normalize.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

namespace rlwb::rewards {
namespace {

bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
}

// Replaces the command \name (not a longer command that starts with it).
void replace_command(std::string& s, std::string_view name, std::string_view to) {
  size_t pos = 0;
  while ((pos = s.find(name, pos)) != std::string::npos) {
    size_t end = pos + name.size();
    if (end < s.size() && is_alpha(s[end]) && is_alpha(name.back())) {
      pos = end;
      continue;
    }
    s.replace(pos, name.size(), to);
    pos += to.size();
  }
}

void trim(std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && is_space(s[b])) ++b;
  while (e > b && is_space(s[e - 1])) --e;
  s = s.substr(b, e - b);
}

// Index just past the brace group opening at open, or npos when unbalanced.
size_t group_end(const std::string& s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '{') ++depth;
    if (s[i] == '}' && --depth == 0) return i + 1;
  }
  return std::string::npos;
}

void strip_delimiters(std::string& s) {
  replace_all(s, "\\$", "");
  replace_all(s, "$", "");
  for (std::string_view d : {"\\[", "\\]", "\\(", "\\)"}) replace_all(s, d, " ");
  replace_command(s, "\\displaystyle", " ");
  replace_command(s, "\\textstyle", " ");
}

void replace_unicode(std::string& s) {
  static const std::array<std::pair<std::string_view, std::string_view>, 12> kForms = {{
      {"\u2212", "-"},
      {"\u00d7", "\\times "},
      {"\u00b7", "\\cdot "},
      {"\u2264", "\\le "},
      {"\u2265", "\\ge "},
      {"\u2260", "\\ne "},
      {"\u03c0", "\\pi "},
      {"\u221a", "\\sqrt"},
      {"\u221e", "\\infty "},
      {"\u00b0", ""},
      {"\u2013", "-"},
      {"\u00a0", " "},
  }};
  for (auto& [from, to] : kForms) replace_all(s, from, to);
}

void strip_sizing(std::string& s) {
  for (std::string_view cmd : {"\\left", "\\right", "\\bigl", "\\bigr", "\\Bigl", "\\Bigr", "\\biggl",
                               "\\biggr", "\\Biggl", "\\Biggr", "\\big", "\\Big", "\\bigg", "\\Bigg"}) {
    size_t pos = 0;
    while ((pos = s.find(cmd, pos)) != std::string::npos) {
      size_t end = pos + cmd.size();
      if (end < s.size() && is_alpha(s[end])) {  // \leftarrow, \bigcup
        pos = end;
        continue;
      }
      if (end < s.size() && s[end] == '.') ++end;  // \left. and \right. are invisible
      s.erase(pos, end - pos);
    }
  }
}

void strip_spacing(std::string& s) {
  replace_all(s, "{,}", "");  // 1{,}000
  // "1\,000": a thin space between digit groups joins them.
  for (size_t pos = 0; (pos = s.find("\\,", pos)) != std::string::npos;) {
    bool digits = pos > 0 && is_digit(s[pos - 1]) && pos + 5 <= s.size() && is_digit(s[pos + 2]) &&
                  is_digit(s[pos + 3]) && is_digit(s[pos + 4]) &&
                  (pos + 5 == s.size() || !is_digit(s[pos + 5]));
    s.replace(pos, 2, digits ? "" : " ");
  }
  replace_all(s, "\\!", "");
  for (std::string_view sp : {"\\;", "\\:", "\\ ", "~"}) replace_all(s, sp, " ");
  replace_command(s, "\\qquad", " ");
  replace_command(s, "\\quad", " ");
  for (char& c : s)
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
}

void unify_spellings(std::string& s) {
  static const std::array<std::pair<std::string_view, std::string_view>, 22> kSpellings = {{
      {"\\dfrac", "\\frac"},   {"\\tfrac", "\\frac"},
      {"\\cfrac", "\\frac"},   {"\\dbinom", "\\binom"},
      {"\\tbinom", "\\binom"}, {"\\leqslant", "\\le"},
      {"\\geqslant", "\\ge"},  {"\\leq", "\\le"},
      {"\\geq", "\\ge"},       {"\\neq", "\\ne"},
      {"\\lbrace", "\\{"},     {"\\rbrace", "\\}"},
      {"\\infin", "\\infty"},  {"\\varnothing", "\\emptyset"},
      {"\\lt", "<"},           {"\\gt", ">"},
      {"\\ast", "*"},          {"\\colon", ":"},
      {"\\lvert", "|"},        {"\\rvert", "|"},
      {"\\vert", "|"},         {"\\mid", "|"},
  }};
  for (auto& [from, to] : kSpellings) replace_command(s, from, to);
}

// \frac12 -> \frac{1}{2}, \sqrt3 -> \sqrt{3}, \frac\pi2 -> \frac{\pi}{2}.
void brace_single_token_arguments(std::string& s) {
  auto brace_next = [&](size_t pos) -> size_t {  // returns the index after the argument
    while (pos < s.size() && s[pos] == ' ') s.erase(pos, 1);
    if (pos >= s.size()) return pos;
    if (s[pos] == '{') {
      size_t end = group_end(s, pos);
      return end == std::string::npos ? s.size() : end;
    }
    size_t end = pos + 1;
    if (s[pos] == '\\') {
      while (end < s.size() && is_alpha(s[end])) ++end;
    } else if (!is_alpha(s[pos]) && !is_digit(s[pos])) {
      return pos;  // not an argument we can brace
    }
    s.insert(end, "}");
    s.insert(pos, "{");
    return end + 2;
  };
  for (std::string_view cmd : {"\\frac", "\\binom", "\\sqrt"}) {
    size_t pos = 0;
    while ((pos = s.find(cmd, pos)) != std::string::npos) {
      size_t at = pos + cmd.size();
      if (at < s.size() && is_alpha(s[at])) {
        pos = at;
        continue;
      }
      if (cmd == "\\sqrt" && at < s.size() && s[at] == '[') {  // \sqrt[3]{x}
        size_t close = s.find(']', at);
        if (close == std::string::npos) break;
        at = close + 1;
      }
      at = brace_next(at);
      if (cmd != "\\sqrt") at = brace_next(at);
      pos = at;
    }
  }
}

void drop_degrees(std::string& s) {
  for (std::string_view d :
       {"^{\\circ}", "^\\circ", "^{\\circ }", "^{ \\circ}", "\\circ", "^{\\degree}", "^\\degree", "\\degree"})
    replace_all(s, d, "");
}

void mark_percent(std::string& s) {
  for (size_t pos = 0; (pos = s.find('%', pos)) != std::string::npos;) {
    if (pos == 0 || s[pos - 1] != '\\') {
      s.insert(pos, "\\");
      ++pos;
    }
    ++pos;
  }
}

bool is_text_command(std::string_view name) {
  return name == "text" || name == "textbf" || name == "textit" || name == "mbox" || name == "mathrm" ||
         name == "textrm" || name == "mathit" || name == "textnormal" || name == "mathbf" ||
         name == "boldsymbol" || name == "operatorname";
}

// If s is exactly one \text{...}-like group (possibly after trimming), its content.
bool unwrap_whole_text(std::string& s) {
  if (s.empty() || s[0] != '\\') return false;
  size_t j = 1;
  while (j < s.size() && is_alpha(s[j])) ++j;
  if (!is_text_command(std::string_view(s).substr(1, j - 1)) || j >= s.size() || s[j] != '{') return false;
  size_t end = group_end(s, j);
  if (end != s.size()) return false;
  s = s.substr(j + 1, end - j - 2);
  trim(s);
  return true;
}

bool is_math_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {
      "or", "and",   "sin",      "cos",    "tan",    "sec",    "csc",  "cot",  "log",  "ln", "exp", "sqrt",
      "pi", "infty", "infinity", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "i",  "e"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

bool is_known_unit(std::string_view w) {
  static constexpr std::string_view kUnits[] = {
      "cm",     "mm",    "km",    "kg",      "mg",      "ft",      "in",    "inch",    "inches",
      "feet",   "yd",    "mi",    "mph",     "lb",      "lbs",     "oz",    "ml",      "hr",
      "hrs",    "min",   "mins",  "sec",     "cents",   "dollars", "units", "degrees", "percent",
      "meters", "miles", "hours", "minutes", "seconds", "days"};
  return std::find(std::begin(kUnits), std::end(kUnits), w) != std::end(kUnits);
}

bool is_unit_text(std::string_view content) {
  bool letter = false;
  for (char c : content) {
    if (is_alpha(c)) {
      letter = true;
    } else if (!(c == ' ' || c == '^' || c == '/' || c == '.' || c == '-' || is_digit(c) || c == '{' ||
                 c == '}')) {
      return false;
    }
  }
  if (!letter) return false;
  std::string t(content);
  trim(t);
  return !is_math_word(t);
}

// "5\text{ cm}^2", "5 \mbox{inches}" -> "5": a trailing text group after content.
void drop_trailing_unit_groups(std::string& s) {
  while (true) {
    trim(s);
    // a trailing ^2 / ^{3} that belongs to a unit
    size_t end = s.size();
    size_t power_at = std::string::npos;
    if (end >= 2 && s[end - 2] == '^' && is_digit(s[end - 1])) power_at = end - 2;
    if (end >= 4 && s.compare(end - 4, 2, "^{") == 0 && is_digit(s[end - 2]) && s[end - 1] == '}')
      power_at = end - 4;
    size_t group_stop = power_at == std::string::npos ? end : power_at;
    if (group_stop == 0 || s[group_stop - 1] != '}') return;
    // find the opening brace of that last group
    int depth = 0;
    size_t open = std::string::npos;
    for (size_t i = group_stop; i-- > 0;) {
      if (s[i] == '}' && (i == 0 || s[i - 1] != '\\')) ++depth;
      if (s[i] == '{' && (i == 0 || s[i - 1] != '\\') && --depth == 0) {
        open = i;
        break;
      }
    }
    if (open == std::string::npos) return;
    size_t name_start = open;
    while (name_start > 0 && is_alpha(s[name_start - 1])) --name_start;
    if (name_start == 0 || s[name_start - 1] != '\\') return;
    if (!is_text_command(std::string_view(s).substr(name_start, open - name_start))) return;
    std::string_view content = std::string_view(s).substr(open + 1, group_stop - open - 2);
    if (!is_unit_text(content)) return;
    std::string before = s.substr(0, name_start - 1);
    trim(before);
    if (before.empty()) return;  // the text is the whole answer
    s = before;
  }
}

// "12 inches", "5 sq units", "30 degrees" after a number -> the number.
void drop_trailing_unit_words(std::string& s) {
  while (true) {
    trim(s);
    size_t end = s.size();
    size_t i = end;
    // optional ^2 on the unit
    if (i >= 2 && s[i - 2] == '^' && is_digit(s[i - 1])) i -= 2;
    size_t word_end = i;
    while (i > 0 && is_alpha(s[i - 1])) --i;
    if (i == word_end || word_end - i < 2) return;
    if (i > 0 && s[i - 1] == '\\') return;  // a command
    std::string word = s.substr(i, word_end - i);
    for (char& c : word) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (is_math_word(word)) return;
    // "5 cm" (spaced) is a unit; "5cm" only for well-known units ("2xy" is a product).
    if (!(i > 0 && is_space(s[i - 1])) && !is_known_unit(word)) return;
    std::string before = s.substr(0, i);
    trim(before);
    if (before.empty()) return;
    char last = before.back();
    if (!(is_digit(last) || last == '}' || is_alpha(last))) return;
    if (is_alpha(last)) {
      // another unit word ("sq units"): allowed only if a number comes before it
      size_t k = before.size();
      while (k > 0 && is_alpha(before[k - 1])) --k;
      if (k > 0 && before[k - 1] == '\\') return;
      std::string rest = before.substr(0, k);
      trim(rest);
      if (rest.empty() || !(is_digit(rest.back()) || rest.back() == '}')) return;
    }
    if (word == "percent") {
      s = before + "\\%";
      return;
    }
    s = before;
  }
}

// 1,234,567.5 or 1 234 567 when it is the whole answer (a list would be "1, 2").
void drop_thousands_commas(std::string& s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && is_digit(s[i])) ++i, ++digits;
  if (digits == 0 || digits > 3) return;
  bool any = false;
  char separator = i < s.size() && (s[i] == ',' || s[i] == ' ') ? s[i] : ',';
  while (i < s.size() && s[i] == separator) {
    if (i + 3 >= s.size() || !is_digit(s[i + 1]) || !is_digit(s[i + 2]) || !is_digit(s[i + 3])) return;
    i += 4;
    any = true;
  }
  if (!any) return;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && is_digit(s[i])) ++i;
  }
  std::string_view rest = std::string_view(s).substr(i);
  if (!(rest.empty() || rest == "\\%")) return;
  s.erase(std::remove(s.begin(), s.begin() + static_cast<long>(i), separator),
          s.begin() + static_cast<long>(i));
}

void drop_trailing_punctuation(std::string& s) {
  while (true) {
    trim(s);
    if (s.size() >= 2 && s.compare(s.size() - 2, 2, "\\.") == 0) {
      s.resize(s.size() - 2);
    } else if (!s.empty() && (s.back() == '.' || s.back() == ',' || s.back() == ';')) {
      s.pop_back();
    } else {
      return;
    }
  }
}

// Spaces only where they separate two letters ("\pi r", "no solution") or two
// numbers ("\log_2 8").
void squeeze_spaces(std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (!is_space(s[i])) {
      out += s[i];
      continue;
    }
    size_t j = i;
    while (j < s.size() && is_space(s[j])) ++j;
    bool letters = !out.empty() && j < s.size() && is_alpha(out.back()) && is_alpha(s[j]);
    bool digits = !out.empty() && j < s.size() && is_digit(out.back()) && is_digit(s[j]);
    if (letters || digits) out += ' ';
    i = j - 1;
  }
  s = std::move(out);
}

void spell_infinity(std::string& s) {
  std::string lowered = s;
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"infinity", "inf"}) {
    size_t pos = 0;
    while ((pos = lowered.find(word, pos)) != std::string::npos) {
      size_t end = pos + word.size();
      bool starts = pos == 0 || !is_alpha(lowered[pos - 1]);
      bool backslash = pos > 0 && lowered[pos - 1] == '\\';
      bool ends = end == lowered.size() || !is_alpha(lowered[end]);
      if (starts && ends && !backslash) {
        s.replace(pos, word.size(), "\\infty");
        lowered.replace(pos, word.size(), "\\infty");
        pos += 6;
      } else {
        pos = end;
      }
    }
  }
}

// A matrix row break (two backslashes) must survive the rules for "\\ " and
// friends: it is set aside as one control character while they run.
constexpr std::string_view kRowBreak = "\\\\";
constexpr std::string_view kRowBreakMark = "\x01";

}  // namespace

std::string normalize_answer(std::string_view answer) {
  std::string s(answer);
  replace_all(s, kRowBreak, kRowBreakMark);
  strip_delimiters(s);
  replace_unicode(s);
  strip_sizing(s);
  strip_spacing(s);
  unify_spellings(s);
  drop_degrees(s);
  mark_percent(s);
  trim(s);
  drop_trailing_punctuation(s);
  unwrap_whole_text(s);
  drop_trailing_unit_groups(s);
  drop_trailing_unit_words(s);
  drop_trailing_punctuation(s);
  unwrap_whole_text(s);
  spell_infinity(s);
  brace_single_token_arguments(s);
  squeeze_spaces(s);
  drop_thousands_commas(s);
  replace_all(s, kRowBreakMark, kRowBreak);
  return s;
}

}  // namespace rlwb::rewards
