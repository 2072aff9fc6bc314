// LaTeX tokenizer for answers (see latex_tokens.h).
#include "rewards/math/latex_tokens.h"

#include <algorithm>
#include <cctype>

namespace rlwb::rewards {
namespace {

bool is_alpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

bool is_function_word(std::string_view w) {
  static constexpr std::string_view kWords[] = {"sin",    "cos",    "tan",  "sec",   "csc",  "cot",  "arcsin",
                                                "arccos", "arctan", "sinh", "cosh",  "tanh", "ln",   "log",
                                                "exp",    "sqrt",   "pi",   "infty", "cdot", "times"};
  return std::find(std::begin(kWords), std::end(kWords), w) != std::end(kWords);
}

bool is_text_command(std::string_view name) {
  return name == "text" || name == "textbf" || name == "textit" || name == "mbox" || name == "mathrm" ||
         name == "textrm" || name == "mathit" || name == "textnormal" || name == "mathbf" ||
         name == "boldsymbol" || name == "operatorname" || name == "textsf";
}

// Index of the '}' closing the group that opens at open, or npos.
size_t closing_brace(std::string_view s, size_t open) {
  int depth = 0;
  for (size_t i = open; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
      continue;
    }
    if (s[i] == '{') ++depth;
    if (s[i] == '}' && --depth == 0) return i;
  }
  return std::string_view::npos;
}

}  // namespace

bool tokenize_latex(std::string_view s, std::vector<LatexToken>* tokens, std::string* error) {
  using K = LatexToken::Kind;
  tokens->clear();
  for (size_t i = 0; i < s.size();) {
    char c = s[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (is_digit(c) || (c == '.' && i + 1 < s.size() && is_digit(s[i + 1]))) {
      size_t j = i;
      bool point = false;
      while (j < s.size() && (is_digit(s[j]) || (s[j] == '.' && !point))) {
        if (s[j] == '.') {
          // "3." followed by a non-digit ends the number before the point
          if (j + 1 >= s.size() || !is_digit(s[j + 1])) break;
          point = true;
        }
        ++j;
      }
      std::string number(s.substr(i, j - i));
      // 0.\overline{3}, 0.1\overline{6}: a repeating decimal, kept as "0.|3", "0.1|6"
      size_t k = j;
      if (!point && k < s.size() && s[k] == '.') ++k;
      constexpr std::string_view kOverline = "\\overline{";
      if (s.substr(k, kOverline.size()) == kOverline) {
        size_t close = s.find('}', k + kOverline.size());
        std::string_view repeat = s.substr(
            k + kOverline.size(), close == std::string_view::npos ? 0 : close - k - kOverline.size());
        if (!repeat.empty() && std::all_of(repeat.begin(), repeat.end(), is_digit)) {
          if (!point) number += '.';
          number += '|';
          number += repeat;
          j = close + 1;
        }
      }
      tokens->push_back({K::kNumber, number});
      i = j;
      continue;
    }
    if (is_alpha(c)) {
      size_t j = i;
      while (j < s.size() && is_alpha(s[j])) ++j;
      std::string word(s.substr(i, j - i));
      std::string lowered = word;
      for (char& ch : lowered) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (is_function_word(word)) {
        tokens->push_back({K::kCommand, word});
      } else if (lowered == "or" || lowered == "and" || word.size() >= 3) {
        tokens->push_back({K::kWord, lowered});
      } else {
        for (char letter : word) tokens->push_back({K::kLetter, std::string(1, letter)});
      }
      i = j;
      continue;
    }
    if (c == '\\') {
      if (i + 1 >= s.size()) {
        *error = "a lone backslash at the end";
        return false;
      }
      size_t j = i + 1;
      if (!is_alpha(s[j])) {  // \{ \} \\ \% \, ...
        tokens->push_back({K::kCommand, std::string(1, s[j])});
        i = j + 1;
        continue;
      }
      while (j < s.size() && is_alpha(s[j])) ++j;
      std::string name(s.substr(i + 1, j - i - 1));
      size_t k = j;
      while (k < s.size() && s[k] == ' ') ++k;
      bool braced = k < s.size() && s[k] == '{';
      if ((is_text_command(name) || name == "begin" || name == "end" || name == "mathbb") && braced) {
        size_t close = closing_brace(s, k);
        if (close == std::string_view::npos) {
          *error = "\\" + name + "{ is never closed";
          return false;
        }
        std::string content(s.substr(k + 1, close - k - 1));
        std::string trimmed = content;
        trimmed.erase(0, trimmed.find_first_not_of(' '));
        trimmed.erase(trimmed.find_last_not_of(' ') + 1);
        if (name == "begin") {
          tokens->push_back({K::kEnvBegin, trimmed});
        } else if (name == "end") {
          tokens->push_back({K::kEnvEnd, trimmed});
        } else if (name == "mathbb") {
          tokens->push_back({K::kCommand, "mathbb" + trimmed});
        } else if (name == "operatorname" && is_function_word(trimmed)) {
          tokens->push_back({K::kCommand, trimmed});
        } else if (trimmed.size() == 1 && is_alpha(trimmed[0]) && name != "text") {
          tokens->push_back({K::kLetter, trimmed});  // \mathrm{e}, \mathbf{v}
        } else {
          tokens->push_back({K::kText, trimmed});
        }
        i = close + 1;
        continue;
      }
      if (name == "mathbb" && k < s.size() && is_alpha(s[k])) {  // \mathbb R
        tokens->push_back({K::kCommand, "mathbb" + std::string(1, s[k])});
        i = k + 1;
        continue;
      }
      tokens->push_back({K::kCommand, name});
      i = j;
      continue;
    }
    // two-character relations
    if ((c == '<' || c == '>' || c == '!') && i + 1 < s.size() && s[i + 1] == '=') {
      tokens->push_back({K::kCommand, c == '<' ? "le" : (c == '>' ? "ge" : "ne")});
      i += 2;
      continue;
    }
    static constexpr std::string_view kPunct = "+-*/^_()[]{},;|!=<>&':";
    if (kPunct.find(c) != std::string_view::npos) {
      tokens->push_back({K::kPunct, std::string(1, c)});
      ++i;
      continue;
    }
    *error = std::string("unexpected character '") + c + "'";
    return false;
  }
  return true;
}

}  // namespace rlwb::rewards
