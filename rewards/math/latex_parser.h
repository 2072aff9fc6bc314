// Normalised LaTeX answer -> MathValue (see math_value.h).
//
// Reads, from the outside in: \cup (union); "or" (union of conditions); commas,
// semicolons and "and" (a bare list); relations = \ne < > \le \ge and "x \in S";
// a ratio a:b (the number a/b);
// a bracketed comma list (\{..\} set, (..) tuple, [a,b] (a,b] [a,b) intervals,
// \langle..\rangle tuple); pmatrix/bmatrix/matrix/vmatrix environments;
// \emptyset and \mathbb{R}; then one expression: + - \pm \mp, * \cdot \times / \div,
// implicit products (2x, 2\sqrt{3}, (a+b)(a-b)), ^ powers, ! factorials, \%,
// \frac \sqrt \sqrt[n] \binom, |x|, functions (\sin x, \sin^2 x, \log_2 8, \ln x),
// \pi e i \infty, Greek letters, subscripted names (x_1, a_{10}), mixed numbers
// (2\frac{1}{4} is 9/4) and repeating decimals (0.\overline{3} is 1/3). Expressions with \pm become
// a list of their variants. Anything else is text (MathValue::kText holding the normalised answer),
// so that parsing never fails: text is compared as text.
#pragma once

#include <string>
#include <string_view>

#include "rewards/math/math_value.h"

namespace rlwb::rewards {

struct ParsedAnswer {
  MathValue value;
  bool is_text_fallback = false;  // the parser gave up; value is kText
  std::string error;              // why it gave up
};

ParsedAnswer parse_answer(std::string_view normalized);

}  // namespace rlwb::rewards
