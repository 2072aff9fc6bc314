// The math answer checker: is a model's final answer the reference answer?
//
//   MathVerdict v = check_math_answer(response, "\\frac{1}{2}");
//   v.score      // 1 when the answer in `response` equals the reference, else 0
//   v.extracted  // the answer found in the response ("0.5" from "... \boxed{0.5}")
//   v.reason     // why, in words ("equal as exact rationals: 1/2")
//
// What it promises:
//   - Extraction (rewards/math/extract.h): the last \boxed{} / \fbox{}, "#### 42",
//     "Answer: ..." / "The (final) answer is ...", a response that is itself a
//     formula, and (only with last_number_fallback) the last number. The
//     reference goes through the same extraction and is otherwise taken whole.
//   - Normalisation (normalize.h): the MATH grader's rules and more (\left \right,
//     \dfrac, \frac12, \sqrt3, units, \text{}, degrees, thousands separators, $,
//     trailing period); "x = 3" compares as 3 when the other side is no equation.
//   - Equivalence (compare.h): exact rationals (0.5 = 1/2 = \frac{1}{2}); numbers
//     with irrational parts within relative_tolerance (2\sqrt{3} = \sqrt{12});
//     expressions with variables through GiNaC under symbolic_timeout;
//     intervals and unions as sets of reals; unordered sets and bare lists;
//     ordered tuples; matrices; equations and inequalities (also against
//     intervals: x > 2 is (2, \infty)); \infty; text answers.
//   - Asymmetry: the reference is a final answer; the prediction must be one too.
//     Against a number, an unevaluated expression (2+3, 6 \cdot 7, 2^{10}, \sqrt{9})
//     does not match (a number may still be written 3/4, 0.\overline{3}, 3:4,
//     1.2 \times 10^{5} or 10^{6}). Against an expression with no variable in a
//     denominator, one with such a denominator (\frac{x^2-1}{x-1} for x+1) does not
//     match. Against an inequality solved for its variable, an unsolved one does
//     not match. When the question is given, a prediction that copies an
//     expression from it does not match unless it is literally the reference.
//   - Compatibility (compat = kMathVerify, rewards/math/compat_extract.h): follows
//     Hugging Face math-verify where the rules above differ: with no box, the
//     last LaTeX expression or number; several boxes taken together; no
//     final-form rules (2^{10} = 1024); 50\% is 50 or 0.5; a decimal on either
//     side compares rounded to 6 places; "(x, y) = (1, 2)" is (1, 2). The
//     differences it keeps are listed in tests/rewards/math/compat_deliberate.jsonl.
//   - Never throws on any text; a check takes microseconds, or at most about
//     symbolic_timeout when GiNaC is needed. Safe to call from several threads.
// Used by the reward graph node (rewards/) and by `rlwb reward math`.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace rlwb::rewards {

// What 50\% means against a number without the sign.
enum class PercentRule {
  kDropSign,  // 50\% = 50 (the MATH grader's rule; the default)
  kFraction,  // 50\% = 0.5
  kEither,    // both
};

// Whose conventions the checker follows (docs/math-checker.md, "Which mode").
enum class CompatMode {
  kDefault,     // RLWB's rules above: the final-form rule, marked answers only
  kMathVerify,  // math-verify's: overrides last_number_fallback, percent,
                // require_final_form and float_rounding_places
};
const char* compat_mode_name(CompatMode mode);  // "default", "math-verify"

struct MathCheckOptions {
  CompatMode compat = CompatMode::kDefault;
  // Take the last number of a response that has no marked answer.
  bool last_number_fallback = false;
  PercentRule percent = PercentRule::kDropSign;
  // Numbers that are not both rational compare within this relative distance
  // (\frac{\sqrt{2}}{2} vs 1/\sqrt{2}, \pi vs 3.14159265358979).
  double relative_tolerance = 1e-9;
  // A decimal prediction written with at least this many decimal places also
  // matches a reference that rounds to it: 0.3333333 for 1/3 with the default;
  // 1 accepts 3.14 for \pi and 0.33 for 1/3; 0 never rounds.
  int rounding_min_places = 6;
  // When either side is a number written with a decimal point, both sides
  // rounded to this many places are compared (math-verify's rule, 6 there); 0: off.
  int float_rounding_places = 0;
  // The asymmetric rules above; false compares values only.
  bool require_final_form = true;
  // Expressions that GiNaC cannot reduce to the same form (trigonometric and
  // log identities) but that agree at every sample point count as equal.
  bool accept_numeric_identity = true;
  // How long one GiNaC simplification may take before the answer counts as wrong.
  std::chrono::milliseconds symbolic_timeout{500};
};

// How the deciding comparison was made.
enum class MatchMethod {
  kNone,             // no comparison (nothing extracted, or a shape mismatch)
  kSameText,         // identical after normalisation
  kExactRational,    // exact rational arithmetic
  kNumeric,          // numbers within relative_tolerance (or rounded decimals)
  kSymbolic,         // GiNaC reduced the difference to 0
  kNumericIdentity,  // agreement at sample points that GiNaC could not prove
  kText,             // text answers compared as words
};
const char* match_method_name(MatchMethod method);  // "exact_rational", ...

struct MathVerdict {
  int score = 0;                      // 1 when equivalent, else 0
  std::string extracted;              // answer taken from the response, as written ("" = none)
  std::string extracted_from;         // where: boxed, hashes, answer_line, whole_text, last_latex,
                                      // last_number, none
  std::string reference_answer;       // answer taken from the reference, as written
  std::string normalized_prediction;  // after normalisation (LaTeX)
  std::string normalized_reference;
  std::string parsed_prediction;  // the value as infix ("1/2", "{1, 2}", "text:...")
  std::string parsed_reference;
  MatchMethod method = MatchMethod::kNone;
  std::string reason;  // why the score is what it is
};

MathVerdict check_math_answer(std::string_view response, std::string_view reference,
                              const MathCheckOptions& options = {}, std::string_view question = {});

// One verdict per row, in order, each the one check_math_answer gives the
// row. Each distinct reference is read once, and a row repeating an earlier
// one (response, reference, question) is not checked again. questions is
// empty or as long as responses; responses and references must be equally
// long (std::invalid_argument if not).
std::vector<MathVerdict> check_math_answers(const std::vector<std::string>& responses,
                                            const std::vector<std::string>& references,
                                            const MathCheckOptions& options = {},
                                            const std::vector<std::string>& questions = {});

}  // namespace rlwb::rewards
