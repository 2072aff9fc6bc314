// Answer extraction as Hugging Face math-verify does it, for the checker's
// math-verify-compatible mode (MathCheckOptions::compat = kMathVerify).
//
// In order of preference:
//   1. every complete \boxed{} / \fbox{} in the response, taken together
//      ("\boxed{2} and \boxed{3}" is the list 2, 3);
//   2. after the last "answer" (any case) that a LaTeX expression or a number
//      follows within 50 characters: the first of them ("The answer is 5, then
//      7" gives 5; "The final answer is $\frac{1}{2}$" gives \frac{1}{2});
//   3. the last LaTeX expression ($...$, $$...$$, \(...\), \[...\]) or number,
//      whichever ends later, with the LaTeX expressions just before it joined
//      by "and", "or" or "," ("$x = 1$ or $x = 2$" is x = 1, x = 2).
// A chain a = b = c without a comma keeps its last side (math-verify's rule).
// The default mode's extraction is rewards/math/extract.h.
#pragma once

#include <string_view>

#include "rewards/math/extract.h"

namespace rlwb::rewards {

ExtractedAnswer extract_answer_math_verify_style(std::string_view response);

}  // namespace rlwb::rewards
