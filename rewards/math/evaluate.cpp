// Exact and numeric evaluation (see evaluate.h).
#include "rewards/math/evaluate.h"

#include <cmath>
#include <limits>
#include <numbers>

namespace rlwb::rewards {
namespace {

using EK = Expr::Kind;
using Complex = std::complex<double>;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::optional<long long> small_integer(const Rational& r, long long limit) {
  if (!r.is_integer() || r.num() > limit || r.num() < -limit) return std::nullopt;
  return static_cast<long long>(r.num());
}

std::optional<Rational> factorial(const Rational& n) {
  auto k = small_integer(n, 33);  // 33! still fits 128 bits
  if (!k || *k < 0) return std::nullopt;
  Rational r = Rational::integer(1);
  for (long long i = 2; i <= *k; ++i) {
    auto next = multiply(r, Rational::integer(i));
    if (!next) return std::nullopt;
    r = *next;
  }
  return r;
}

std::optional<Rational> binomial(const Rational& n, const Rational& k) {
  auto nn = small_integer(n, 1000), kk = small_integer(k, 1000);
  if (!nn || !kk || *nn < 0) return std::nullopt;
  if (*kk < 0 || *kk > *nn) return Rational::integer(0);
  Rational r = Rational::integer(1);
  for (long long i = 1; i <= *kk; ++i) {
    auto m = multiply(r, Rational::integer(*nn - *kk + i));
    auto d = m ? divide(*m, Rational::integer(i)) : std::nullopt;
    if (!d) return std::nullopt;
    r = *d;
  }
  return r;
}

NumericValue nan_value() { return {Complex(kNaN, kNaN), 0}; }

Complex apply(const std::string& f, Complex x) {
  if (x.imag() == 0) x = Complex(x.real(), 0.0);  // -0i would put sqrt(-4) on the wrong branch
  if (f == "sqrt") return std::sqrt(x);
  if (f == "sin") return std::sin(x);
  if (f == "cos") return std::cos(x);
  if (f == "tan") return std::tan(x);
  if (f == "asin") return std::asin(x);
  if (f == "acos") return std::acos(x);
  if (f == "atan") return std::atan(x);
  if (f == "sinh") return std::sinh(x);
  if (f == "cosh") return std::cosh(x);
  if (f == "tanh") return std::tanh(x);
  if (f == "log") return x == Complex(0, 0) ? Complex(kNaN, kNaN) : std::log(x);
  if (f == "exp") return std::exp(x);
  if (f == "abs") return Complex(std::abs(x), 0);
  if (f == "factorial") {
    if (std::abs(x.imag()) > 1e-12 || x.real() < 0 || x.real() > 170) return Complex(kNaN, kNaN);
    return Complex(std::tgamma(x.real() + 1), 0);
  }
  return Complex(kNaN, kNaN);
}

}  // namespace

std::optional<Rational> exact_value(const Expr& e, PercentReading percent) {
  switch (e.kind) {
    case EK::kNumber:
      return e.number;
    case EK::kSum: {
      Rational total;
      for (const Expr& a : e.args) {
        auto v = exact_value(a, percent);
        auto s = v ? add(total, *v) : std::nullopt;
        if (!s) return std::nullopt;
        total = *s;
      }
      return total;
    }
    case EK::kProduct: {
      Rational total = Rational::integer(1);
      for (const Expr& a : e.args) {
        auto v = exact_value(a, percent);
        auto p = v ? multiply(total, *v) : std::nullopt;
        if (!p) return std::nullopt;
        total = *p;
      }
      return total;
    }
    case EK::kQuotient: {
      auto a = exact_value(e.args[0], percent), b = exact_value(e.args[1], percent);
      return a && b ? divide(*a, *b) : std::nullopt;
    }
    case EK::kNegate: {
      auto a = exact_value(e.args[0], percent);
      return a ? negate(*a) : std::nullopt;
    }
    case EK::kPercent: {
      auto a = exact_value(e.args[0], percent);
      if (!a || percent == PercentReading::kNumber) return a;
      return divide(*a, Rational::integer(100));
    }
    case EK::kPower: {
      auto base = exact_value(e.args[0], percent);
      auto exponent = exact_value(e.args[1], percent);
      if (!base || !exponent) return std::nullopt;
      if (auto k = small_integer(*exponent, 4096)) return power(*base, *k);
      if (*exponent == *Rational::fraction(1, 2)) return exact_sqrt(*base);
      return std::nullopt;
    }
    case EK::kFunction: {
      if (e.name == "sqrt") {
        auto a = exact_value(e.args[0], percent);
        return a ? exact_sqrt(*a) : std::nullopt;
      }
      if (e.name == "factorial") {
        auto a = exact_value(e.args[0], percent);
        return a ? factorial(*a) : std::nullopt;
      }
      if (e.name == "binomial") {
        auto n = exact_value(e.args[0], percent), k = exact_value(e.args[1], percent);
        return n && k ? binomial(*n, *k) : std::nullopt;
      }
      if (e.name == "abs") {
        auto a = exact_value(e.args[0], percent);
        if (!a) return std::nullopt;
        return a->sign() < 0 ? negate(*a) : a;
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

NumericValue numeric_value(const Expr& e, const SymbolValues& symbols, PercentReading percent) {
  switch (e.kind) {
    case EK::kNumber: {
      double v = e.number.to_double();
      return {Complex(v, 0), std::abs(v)};
    }
    case EK::kSymbol: {
      auto it = symbols.find(e.name);
      if (it == symbols.end()) return nan_value();
      return {Complex(it->second, 0), std::abs(it->second)};
    }
    case EK::kConstant: {
      if (e.name == "pi") return {Complex(std::numbers::pi, 0), std::numbers::pi};
      if (e.name == "e") return {Complex(std::numbers::e, 0), std::numbers::e};
      if (e.name == "i") return {Complex(0, 1), 1};
      return nan_value();
    }
    case EK::kInfinity:
      return nan_value();
    case EK::kSum: {
      NumericValue total{Complex(0, 0), 0};
      for (const Expr& a : e.args) {
        NumericValue v = numeric_value(a, symbols, percent);
        total.value += v.value;
        total.magnitude += v.magnitude;
      }
      return total;
    }
    case EK::kProduct: {
      NumericValue total{Complex(1, 0), 1};
      for (const Expr& a : e.args) {
        NumericValue v = numeric_value(a, symbols, percent);
        total.value *= v.value;
        total.magnitude *= v.magnitude;
      }
      return total;
    }
    case EK::kQuotient: {
      NumericValue a = numeric_value(e.args[0], symbols, percent);
      NumericValue b = numeric_value(e.args[1], symbols, percent);
      if (std::abs(b.value) == 0) return nan_value();
      // The relative error of b adds to that of the quotient.
      double relative = a.magnitude / std::max(std::abs(a.value), 1e-300) + b.magnitude / std::abs(b.value);
      Complex q = a.value / b.value;
      return {q, std::abs(q) * std::min(relative, 1e300)};
    }
    case EK::kNegate: {
      NumericValue a = numeric_value(e.args[0], symbols, percent);
      return {Complex(0, 0) - a.value, a.magnitude};
    }
    case EK::kPercent: {
      NumericValue a = numeric_value(e.args[0], symbols, percent);
      if (percent == PercentReading::kFraction) return {a.value / 100.0, a.magnitude / 100.0};
      return a;
    }
    case EK::kPower: {
      NumericValue base = numeric_value(e.args[0], symbols, percent);
      NumericValue exponent = numeric_value(e.args[1], symbols, percent);
      Complex result;
      double ex = exponent.value.real();
      if (exponent.value.imag() == 0 && ex == std::round(ex) && std::abs(ex) <= 1024) {
        if (base.value == Complex(0, 0) && ex < 0) return nan_value();
        result = std::pow(base.value, static_cast<int>(ex));
        double mag = std::pow(base.magnitude, std::abs(ex));
        return {result, ex < 0 ? std::abs(result) * (1 + mag * 1e-16) : mag};
      }
      if (base.value.imag() == 0 && base.value.real() > 0) {
        result = std::exp(exponent.value * std::log(base.value.real()));
      } else if (base.value.imag() == 0 && base.value.real() < 0 && exponent.value.imag() == 0) {
        // real odd roots of negative numbers: (-8)^(1/3) = -2, as a student means it
        double inv = 1.0 / ex;
        if (std::abs(inv - std::round(inv)) < 1e-9 && static_cast<long long>(std::round(inv)) % 2 != 0)
          result = Complex(-std::pow(-base.value.real(), ex), 0);
        else
          result = std::pow(base.value, exponent.value);
      } else {
        result = std::pow(base.value, exponent.value);
      }
      return {result, std::abs(result) * (1 + base.magnitude + exponent.magnitude)};
    }
    case EK::kFunction: {
      if (e.name == "binomial") {
        NumericValue n = numeric_value(e.args[0], symbols, percent);
        NumericValue k = numeric_value(e.args[1], symbols, percent);
        double nn = n.value.real(), kk = k.value.real();
        if (n.value.imag() != 0 || k.value.imag() != 0 || std::abs(nn) > 170 || std::abs(kk) > 170)
          return nan_value();
        // Gamma form, defined for real n (binomial(n, 2) = n(n-1)/2 everywhere).
        double v = std::tgamma(nn + 1) / (std::tgamma(kk + 1) * std::tgamma(nn - kk + 1));
        if (!std::isfinite(v)) return nan_value();
        return {Complex(v, 0), std::abs(v)};
      }
      NumericValue a = numeric_value(e.args[0], symbols, percent);
      Complex r = apply(e.name, a.value);
      return {r, std::abs(r) + a.magnitude};
    }
    case EK::kPlusMinus:
      return nan_value();
  }
  return nan_value();
}

void collect_symbols(const Expr& e, std::set<std::string>* names) {
  if (e.kind == EK::kSymbol) names->insert(e.name);
  for (const Expr& a : e.args) collect_symbols(a, names);
}

bool contains_kind(const Expr& e, Expr::Kind kind) {
  if (e.kind == kind) return true;
  for (const Expr& a : e.args)
    if (contains_kind(a, kind)) return true;
  return false;
}

bool contains_function(const Expr& e) {
  if (e.kind == EK::kFunction || e.kind == EK::kConstant) return true;
  if (e.kind == EK::kPower) {
    const Expr& ex = e.args[1];
    bool integer =
        (ex.kind == EK::kNumber && ex.number.is_integer()) ||
        (ex.kind == EK::kNegate && ex.args[0].kind == EK::kNumber && ex.args[0].number.is_integer());
    if (!integer) return true;
  }
  for (const Expr& a : e.args)
    if (contains_function(a)) return true;
  return false;
}

size_t node_count(const Expr& e) {
  size_t n = 1;
  for (const Expr& a : e.args) n += node_count(a);
  return n;
}

int infinity_sign(const Expr& e) {
  if (e.kind == EK::kInfinity) return 1;
  if (e.kind == EK::kNegate) return -infinity_sign(e.args[0]);
  return 0;
}

}  // namespace rlwb::rewards
