// Tokens of a normalised LaTeX answer, for rewards/math/latex_parser.cpp.
//
// "2\sqrt{x}+\frac12" -> number 2, command sqrt, { , letter x, }, +, command frac, ...
// Runs of letters: a known function word (sin, log, sqrt, pi, ...) becomes a
// command as if it had a backslash; "or"/"and" and runs of three or more other
// letters become words (prose, units, names); shorter runs are single letters
// (xy is x times y). \text{...} and its kin become one text token, except that
// \mathrm{e} and the like (one letter) stay letters.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rlwb::rewards {

struct LatexToken {
  enum class Kind {
    kNumber,    // text: "12", "0.5", ".5"; "0.1|6" for 0.1\overline{6}
    kLetter,    // text: one letter
    kCommand,   // text: the name without backslash ("frac", "{", "}", "\\", "%", ",")
    kPunct,     // text: one of + - * / ^ _ ( ) [ ] { } , ; | ! = < > & ' :
    kWord,      // text: a word of prose
    kText,      // text: the content of \text{...}
    kEnvBegin,  // text: environment name of \begin{...}
    kEnvEnd,    // text: environment name of \end{...}
  };
  Kind kind;
  std::string text;
  bool is(Kind k, std::string_view t) const { return kind == k && text == t; }
};

// Tokens of s; false (with what in *error) on a lone backslash or unbalanced \text.
bool tokenize_latex(std::string_view s, std::vector<LatexToken>* tokens, std::string* error);

}  // namespace rlwb::rewards
