// Printing parsed answers as infix text: the LaTeX-to-infix translation that
// GiNaC reads, and the "parsed" forms shown in a verdict.
//
//   \frac{\sqrt{2}}{2}  -> sqrt(2)/2        2\pi r^2   -> 2*Pi*r^2
//   0.25                -> 1/4              \sin^2 x   -> sin(x)^2
//   50\%                -> 50 or 50/100 (as the percent reading says)
//   e^{i\pi}            -> exp(I*Pi)
// Numbers are printed exactly (GiNaC would read 0.25 as a float). Constants are
// Pi, E and I; a user symbol named I, E or Pi is renamed v_I, v_E, v_Pi.
#pragma once

#include <string>

#include "rewards/math/evaluate.h"
#include "rewards/math/math_value.h"

namespace rlwb::rewards {

std::string to_infix(const Expr& e, PercentReading percent = PercentReading::kNumber);
std::string to_infix(const MathValue& v, PercentReading percent = PercentReading::kNumber);

}  // namespace rlwb::rewards
