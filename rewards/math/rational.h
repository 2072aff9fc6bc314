// Exact rational numbers: where 0.5, 1/2 and \frac{1}{2} meet in the math checker.
//
// 128-bit numerator and denominator, always reduced, denominator positive. Every
// operation that could overflow returns std::nullopt instead of wrapping, so a
// caller falls back to floating point and never to a wrong exact answer.
// Used by rewards/math/evaluate.h (exact values of answers) and the parser
// (decimal literals are read exactly: 0.1 is 1/10, not a double).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rlwb::rewards {

class Rational {
 public:
  using Int = __int128;

  Rational() = default;  // 0
  static Rational integer(long long value) { return Rational(value, 1); }
  // num/den reduced; nullopt when den is 0.
  static std::optional<Rational> fraction(Int num, Int den);
  // "42", "0.25", ".5", "3." (digits with at most one point, no sign);
  // nullopt when it is not such a literal or does not fit.
  static std::optional<Rational> parse_decimal(std::string_view text);

  Int num() const { return num_; }
  Int den() const { return den_; }
  bool is_integer() const { return den_ == 1; }
  bool is_zero() const { return num_ == 0; }
  int sign() const { return num_ > 0 ? 1 : (num_ < 0 ? -1 : 0); }
  double to_double() const;
  std::string to_string() const;  // "-3/4", "2"

  friend bool operator==(const Rational&, const Rational&) = default;
  friend bool operator<(const Rational& a, const Rational& b);

 private:
  Rational(Int num, Int den) : num_(num), den_(den) {}
  Int num_ = 0;
  Int den_ = 1;
};

// Arithmetic; nullopt on overflow (and on division by zero).
std::optional<Rational> add(const Rational& a, const Rational& b);
std::optional<Rational> subtract(const Rational& a, const Rational& b);
std::optional<Rational> multiply(const Rational& a, const Rational& b);
std::optional<Rational> divide(const Rational& a, const Rational& b);
std::optional<Rational> negate(const Rational& a);
std::optional<Rational> power(const Rational& base, long long exponent);
// The exact square root when a is the square of a rational (9/4 -> 3/2).
std::optional<Rational> exact_sqrt(const Rational& a);

std::string int128_to_string(Rational::Int value);

}  // namespace rlwb::rewards
