// Exact rationals with overflow checks (see rational.h).
#include "rewards/math/rational.h"

#include <cmath>

namespace rlwb::rewards {
namespace {

using Int = Rational::Int;

Int gcd(Int a, Int b) {
  if (a < 0) a = -a;
  if (b < 0) b = -b;
  while (b != 0) {
    Int t = a % b;
    a = b;
    b = t;
  }
  return a;
}

bool mul_ok(Int a, Int b, Int* out) { return !__builtin_mul_overflow(a, b, out); }
bool add_ok(Int a, Int b, Int* out) { return !__builtin_add_overflow(a, b, out); }

// The most negative value has no positive counterpart; keep away from it.
constexpr Int kMax = ~(Int(1) << 127);

}  // namespace

std::optional<Rational> Rational::fraction(Int num, Int den) {
  if (den == 0) return std::nullopt;
  if (num == -kMax - 1 || den == -kMax - 1) return std::nullopt;
  if (den < 0) {
    num = -num;
    den = -den;
  }
  Int g = gcd(num, den);
  if (g > 1) {
    num /= g;
    den /= g;
  }
  return Rational(num, den);
}

std::optional<Rational> Rational::parse_decimal(std::string_view text) {
  Int num = 0, den = 1;
  bool point = false, digit = false;
  for (char c : text) {
    if (c == '.') {
      if (point) return std::nullopt;
      point = true;
    } else if (c >= '0' && c <= '9') {
      digit = true;
      if (!mul_ok(num, 10, &num) || !add_ok(num, c - '0', &num)) return std::nullopt;
      if (point && !mul_ok(den, 10, &den)) return std::nullopt;
    } else {
      return std::nullopt;
    }
  }
  if (!digit) return std::nullopt;
  return fraction(num, den);
}

double Rational::to_double() const {
  return static_cast<double>(static_cast<long double>(num_) / static_cast<long double>(den_));
}

std::string int128_to_string(Int value) {
  if (value == 0) return "0";
  bool negative = value < 0;
  std::string digits;
  while (value != 0) {
    int d = static_cast<int>(value % 10);
    digits.insert(digits.begin(), static_cast<char>('0' + (d < 0 ? -d : d)));
    value /= 10;
  }
  return negative ? "-" + digits : digits;
}

std::string Rational::to_string() const {
  return den_ == 1 ? int128_to_string(num_) : int128_to_string(num_) + "/" + int128_to_string(den_);
}

bool operator<(const Rational& a, const Rational& b) {
  Int l, r;
  if (mul_ok(a.num_, b.den_, &l) && mul_ok(b.num_, a.den_, &r)) return l < r;
  return static_cast<long double>(a.num_) / a.den_ < static_cast<long double>(b.num_) / b.den_;
}

std::optional<Rational> add(const Rational& a, const Rational& b) {
  Int g = gcd(a.den(), b.den());
  Int l, r, s, d;
  if (!mul_ok(a.num(), b.den() / g, &l) || !mul_ok(b.num(), a.den() / g, &r)) return std::nullopt;
  if (!add_ok(l, r, &s) || !mul_ok(a.den() / g, b.den(), &d)) return std::nullopt;
  return Rational::fraction(s, d);
}

std::optional<Rational> negate(const Rational& a) { return Rational::fraction(-a.num(), a.den()); }

std::optional<Rational> subtract(const Rational& a, const Rational& b) {
  auto nb = negate(b);
  return nb ? add(a, *nb) : std::nullopt;
}

std::optional<Rational> multiply(const Rational& a, const Rational& b) {
  // Cross-reduce first so that products stay small.
  Int g1 = gcd(a.num(), b.den()), g2 = gcd(b.num(), a.den());
  if (g1 == 0) g1 = 1;
  if (g2 == 0) g2 = 1;
  Int n, d;
  if (!mul_ok(a.num() / g1, b.num() / g2, &n) || !mul_ok(a.den() / g2, b.den() / g1, &d)) return std::nullopt;
  return Rational::fraction(n, d);
}

std::optional<Rational> divide(const Rational& a, const Rational& b) {
  if (b.is_zero()) return std::nullopt;
  auto inverse = Rational::fraction(b.den(), b.num());
  return inverse ? multiply(a, *inverse) : std::nullopt;
}

std::optional<Rational> power(const Rational& base, long long exponent) {
  if (exponent < 0) {
    if (base.is_zero()) return std::nullopt;
    auto inverse = Rational::fraction(base.den(), base.num());
    if (!inverse) return std::nullopt;
    return power(*inverse, -exponent);
  }
  if (exponent > 512 && base.num() != base.den() && base.num() != 0 && base.num() != -base.den())
    return std::nullopt;  // cannot fit 128 bits anyway
  Rational result = Rational::integer(1), square = base;
  while (exponent > 0) {
    if (exponent & 1) {
      auto r = multiply(result, square);
      if (!r) return std::nullopt;
      result = *r;
    }
    exponent >>= 1;
    if (exponent > 0) {
      auto s = multiply(square, square);
      if (!s) return std::nullopt;
      square = *s;
    }
  }
  return result;
}

namespace {
std::optional<Int> integer_sqrt(Int v) {
  if (v < 0) return std::nullopt;
  Int r = static_cast<Int>(std::sqrt(static_cast<long double>(v)));
  for (Int c = (r > 2 ? r - 2 : 0); c <= r + 2; ++c) {
    Int sq;
    if (!mul_ok(c, c, &sq)) break;
    if (sq == v) return c;
  }
  return std::nullopt;
}
}  // namespace

std::optional<Rational> exact_sqrt(const Rational& a) {
  auto n = integer_sqrt(a.num());
  auto d = integer_sqrt(a.den());
  if (!n || !d) return std::nullopt;
  return Rational::fraction(*n, *d);
}

}  // namespace rlwb::rewards
