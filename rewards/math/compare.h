// Whether two parsed answers are the same answer (prediction against reference).
//
// The rules, by the reference's shape:
//   - a value: exact rationals first; numbers with irrational parts within
//     MathCheckOptions::relative_tolerance; expressions with variables by sample
//     points (a difference at any point is final) and then GiNaC (symbolic.h);
//   - a bare list or a set: the same elements in any order; a tuple: in order
//     (a bare list against a tuple is read in its written order);
//   - intervals, unions, \mathbb{R}, \emptyset, sets of numbers and inequalities
//     in one variable: as sets of real numbers, after merging touching pieces,
//     so (1,3) = (1,2) \cup [2,3) and x > 2 = (2, \infty);
//   - other equations and inequalities: the same relation, with sides
//     that differ by a constant factor (positive for inequalities);
//   - a matrix: same size, entry by entry; a one-row or one-column matrix also
//     against a tuple;
//   - text: the same words, ignoring case, spaces and punctuation.
// "x = 3" (a lone variable on the left) compares as 3 unless both sides are such
// bindings of different variables. The asymmetric final-form rules are in
// math_check.h. Used by rewards/math/math_check.cpp.
#pragma once

#include <string>

#include "rewards/math/math_check.h"
#include "rewards/math/math_value.h"

namespace rlwb::rewards {

struct Comparison {
  bool equal = false;
  MatchMethod method = MatchMethod::kNone;
  std::string reason;
};

Comparison compare_answers(const MathValue& prediction, const MathValue& reference,
                           const MathCheckOptions& options);

}  // namespace rlwb::rewards
