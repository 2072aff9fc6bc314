// String normalisation of an extracted answer, before it is parsed.
//
// The rules of the MATH dataset's grader and more, applied in this order:
//   - math delimiters: $...$, \(...\), \[...\], \displaystyle; the dollar sign \$;
//   - unicode forms: − × · ≤ ≥ ≠ π √ ∞ become their LaTeX commands;
//   - sizing: \left \right \bigl \Bigr ... (and \left. \right.);
//   - spacing: \! \, \; \: \quad ~ (a \, or {,} between digit groups joins them);
//   - spellings: \dfrac \tfrac \cfrac -> \frac, \dbinom \tbinom -> \binom,
//     \leq -> \le, \geq -> \ge, \neq -> \ne, \lbrace -> \{, \infin -> \infty;
//   - single-token arguments braced: \frac12 -> \frac{1}{2}, \sqrt3 -> \sqrt{3};
//   - degrees dropped: ^\circ, ^{\circ}, °, \degree, a trailing "degrees";
//   - percent kept as one token: % and "percent" become \% (its meaning is a
//     comparison setting, MathCheckOptions::percent);
//   - text: \text{...} (\mbox, \textbf, \mathrm, ...) around the whole answer is
//     unwrapped; a trailing unit (\text{ cm}^2, "inches", "dollars") is removed;
//   - thousands separators: 1,000,000 (when the whole answer is that number),
//     1{,}000 and 1\,000;
//   - trailing punctuation (. , ;) and spaces that carry no meaning.
// Leading "x =" is handled on the parsed value (compare.h), where it can see
// whether the other side is an equation too.
#pragma once

#include <string>
#include <string_view>

namespace rlwb::rewards {

std::string normalize_answer(std::string_view answer);

}  // namespace rlwb::rewards
