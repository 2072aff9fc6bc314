// Exact rationals with overflow checks (rewards/math/rational.h).
#include "rewards/math/rational.h"

#include <gtest/gtest.h>

namespace rlwb::rewards {
namespace {

Rational r(long long n, long long d) { return *Rational::fraction(n, d); }

TEST(Rational, FractionsAreReducedWithAPositiveDenominator) {
  EXPECT_EQ(r(2, 4).to_string(), "1/2");
  EXPECT_EQ(r(3, -6).to_string(), "-1/2");
  EXPECT_EQ(r(0, -5).to_string(), "0");
  EXPECT_FALSE(Rational::fraction(1, 0).has_value());
}

TEST(Rational, DecimalsAreReadExactly) {
  EXPECT_EQ(Rational::parse_decimal("0.25")->to_string(), "1/4");
  EXPECT_EQ(Rational::parse_decimal(".5")->to_string(), "1/2");
  EXPECT_EQ(Rational::parse_decimal("3.")->to_string(), "3");
  EXPECT_EQ(*Rational::parse_decimal("0.10"), *Rational::parse_decimal("0.1"));
  EXPECT_FALSE(Rational::parse_decimal("1.2.3").has_value());
  EXPECT_FALSE(Rational::parse_decimal("-1").has_value());
  EXPECT_FALSE(Rational::parse_decimal(".").has_value());
  EXPECT_FALSE(Rational::parse_decimal(std::string(50, '9')).has_value());  // too big
  EXPECT_EQ(Rational::parse_decimal(std::string(30, '9'))->to_string(), std::string(30, '9'));
}

TEST(Rational, ArithmeticIsExact) {
  EXPECT_EQ(add(r(1, 3), r(1, 6))->to_string(), "1/2");
  EXPECT_EQ(subtract(r(1, 3), r(1, 2))->to_string(), "-1/6");
  EXPECT_EQ(multiply(r(2, 3), r(9, 4))->to_string(), "3/2");
  EXPECT_EQ(divide(r(1, 2), r(1, 4))->to_string(), "2");
  EXPECT_FALSE(divide(r(1, 2), Rational()).has_value());
  EXPECT_EQ(power(r(2, 3), 3)->to_string(), "8/27");
  EXPECT_EQ(power(r(2, 3), -2)->to_string(), "9/4");
  EXPECT_FALSE(power(Rational(), -1).has_value());
}

TEST(Rational, OverflowIsReportedNotWrapped) {
  EXPECT_FALSE(power(Rational::integer(10), 40).has_value());
  EXPECT_TRUE(power(Rational::integer(10), 37).has_value());
  Rational big = *power(Rational::integer(2), 120);
  EXPECT_FALSE(multiply(big, big).has_value());
  EXPECT_FALSE(add(big, big).has_value() && add(*add(big, big), big)->sign() < 0);
  EXPECT_EQ(power(Rational::integer(-1), 1000001)->to_string(), "-1");
}

TEST(Rational, ExactSquareRoots) {
  EXPECT_EQ(exact_sqrt(r(9, 4))->to_string(), "3/2");
  EXPECT_FALSE(exact_sqrt(r(2, 1)).has_value());
  EXPECT_FALSE(exact_sqrt(r(-4, 1)).has_value());
}

TEST(Rational, OrdersAndConverts) {
  EXPECT_TRUE(r(1, 3) < r(1, 2));
  EXPECT_FALSE(r(1, 2) < r(1, 3));
  EXPECT_DOUBLE_EQ(r(1, 4).to_double(), 0.25);
  EXPECT_EQ(int128_to_string(-(Rational::Int(1) << 100)), "-1267650600228229401496703205376");
}

}  // namespace
}  // namespace rlwb::rewards
