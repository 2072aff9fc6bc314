// Values of expressions: exact (rational) when possible, numeric otherwise.
//
// exact_value gives the rational value of an expression made of numbers and
// + - * / with integer powers, factorials and perfect-square roots (2^{10},
// \frac{3}{4}, \sqrt{9/4}); anything irrational, symbolic or too large has none.
// numeric_value evaluates in complex doubles at given values of the symbols,
// with a bound on the rounding error, so that "these differ" can be told apart
// from "rounding noise". rewards/math/compare.cpp uses both.
#pragma once

#include <complex>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "rewards/math/math_value.h"
#include "rewards/math/rational.h"

namespace rlwb::rewards {

// How to read 50\%: as 50 (the sign is dropped) or as 1/2.
enum class PercentReading { kNumber, kFraction };

std::optional<Rational> exact_value(const Expr& e, PercentReading percent);

struct NumericValue {
  std::complex<double> value;
  double magnitude = 0;  // sum of the sizes of the parts: the rounding error is about 1e-16 of it
  bool ok() const { return std::isfinite(value.real()) && std::isfinite(value.imag()); }
};

using SymbolValues = std::map<std::string, double>;
// Unbound symbols and infinity give a non-finite value.
NumericValue numeric_value(const Expr& e, const SymbolValues& symbols, PercentReading percent);

void collect_symbols(const Expr& e, std::set<std::string>* names);
bool contains_kind(const Expr& e, Expr::Kind kind);
bool contains_function(const Expr& e);  // any function or non-integer power (not a rational function)
size_t node_count(const Expr& e);

// +1 for \infty, -1 for -\infty, 0 for anything else.
int infinity_sign(const Expr& e);

}  // namespace rlwb::rewards
