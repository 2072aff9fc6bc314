// Reading normalised answers into values (rewards/math/latex_parser.h), shown
// through their infix form (rewards/math/infix.h).
#include <gtest/gtest.h>

#include "rewards/math/infix.h"
#include "rewards/math/latex_parser.h"

namespace rlwb::rewards {
namespace {

using VK = MathValue::Kind;

std::string infix(std::string_view latex) { return to_infix(parse_answer(latex).value); }
VK kind(std::string_view latex) { return parse_answer(latex).value.kind; }

TEST(MathParser, ReadsArithmeticWithPrecedence) {
  EXPECT_EQ(infix("1+2\\cdot3^2"), "1+2*3^2");
  EXPECT_EQ(infix("-x^2"), "-x^2");
  EXPECT_EQ(infix("(a+b)/c"), "(a+b)/c");
  EXPECT_EQ(infix("a-(b-c)"), "a-(b-c)");
  EXPECT_EQ(infix("6\\div 3\\times 2"), "6/3*2");
}

TEST(MathParser, ReadsImplicitProducts) {
  EXPECT_EQ(infix("2x"), "2*x");
  EXPECT_EQ(infix("2\\sqrt{3}"), "2*sqrt(3)");
  EXPECT_EQ(infix("(a+b)(a-b)"), "(a+b)*(a-b)");
  EXPECT_EQ(infix("xy"), "x*y");
  EXPECT_EQ(infix("2\\pi r"), "2*Pi*r");
}

TEST(MathParser, ReadsDecimalsExactly) {
  EXPECT_EQ(infix("0.25"), "1/4");
  EXPECT_EQ(infix(".5"), "1/2");
}

TEST(MathParser, ReadsMixedNumbers) {
  EXPECT_EQ(infix("2\\frac{1}{4}"), "9/4");
  EXPECT_EQ(infix("-1\\frac{1}{2}"), "-3/2");
  EXPECT_EQ(infix("2\\frac{x}{4}"), "2*x/4");  // not a mixed number
}

TEST(MathParser, ReadsCommandsAndFunctions) {
  EXPECT_EQ(infix("\\frac{\\sqrt{2}}{2}"), "sqrt(2)/2");
  EXPECT_EQ(infix("\\sqrt[3]{x}"), "x^(1/3)");
  EXPECT_EQ(infix("\\binom{n}{2}"), "binomial(n,2)");
  EXPECT_EQ(infix("\\sin^2 x"), "sin(x)^2");
  EXPECT_EQ(infix("\\sin 2x"), "sin(2*x)");
  EXPECT_EQ(infix("\\sin^{-1}(x)"), "asin(x)");
  EXPECT_EQ(infix("\\arctan x"), "atan(x)");
  EXPECT_EQ(infix("\\ln x"), "log(x)");
  EXPECT_EQ(infix("\\log_2 8"), "log(8)/log(2)");
  EXPECT_EQ(infix("\\sec x"), "1/cos(x)");
  EXPECT_EQ(infix("|x-1|"), "abs(x-1)");
  EXPECT_EQ(infix("5!"), "factorial(5)");
  EXPECT_EQ(infix("e^{i\\pi}"), "exp(I*Pi)");
  EXPECT_EQ(infix("2e"), "2*E");
}

TEST(MathParser, NamesSymbolsWithSubscriptsAndGreek) {
  EXPECT_EQ(infix("x_1+x_{10}"), "x_1+x_10");
  EXPECT_EQ(infix("\\alpha\\beta"), "alpha*beta");
  EXPECT_EQ(infix("I+E"), "v_I+v_E");  // not GiNaC's constants
}

TEST(MathParser, ReadsShapes) {
  EXPECT_EQ(kind("1,2"), VK::kList);
  EXPECT_EQ(kind("\\{1,2\\}"), VK::kSet);
  EXPECT_EQ(kind("(1,2)"), VK::kTuple);
  EXPECT_EQ(kind("[1,2,3]"), VK::kTuple);
  EXPECT_EQ(kind("\\langle1,2\\rangle"), VK::kTuple);
  EXPECT_EQ(kind("(x+1)"), VK::kExpr);
  EXPECT_EQ(kind("\\emptyset"), VK::kEmptySet);
  EXPECT_EQ(kind("\\{\\}"), VK::kEmptySet);
  EXPECT_EQ(kind("\\mathbb{R}"), VK::kReals);
  EXPECT_EQ(kind("x<3"), VK::kRelation);
  EXPECT_EQ(kind("(1,2)\\cup(3,4)"), VK::kUnion);
  EXPECT_EQ(kind("x<1\\text{or}x>2"), VK::kUnion);
}

TEST(MathParser, ReadsIntervalBrackets) {
  ParsedAnswer p = parse_answer("(1,2]");
  ASSERT_EQ(p.value.kind, VK::kInterval);
  EXPECT_FALSE(p.value.left_closed);
  EXPECT_TRUE(p.value.right_closed);
  EXPECT_EQ(infix("[-\\infty,3)"), "[-oo, 3)");
}

TEST(MathParser, ReadsRelationChains) {
  ParsedAnswer p = parse_answer("1<x\\le5");
  ASSERT_EQ(p.value.kind, VK::kRelation);
  ASSERT_EQ(p.value.relations.size(), 2u);
  EXPECT_EQ(p.value.relations[0], Relation::kLess);
  EXPECT_EQ(p.value.relations[1], Relation::kLessEqual);
  EXPECT_EQ(infix("x\\in[1,2]"), "[1, 2]");
}

TEST(MathParser, ReadsMatrices) {
  ParsedAnswer p = parse_answer("\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}");
  ASSERT_EQ(p.value.kind, VK::kMatrix);
  EXPECT_EQ(p.value.rows, 2u);
  EXPECT_EQ(p.value.cols, 2u);
  EXPECT_EQ(infix("\\begin{bmatrix}1\\\\2\\\\\\end{bmatrix}"), "[[1], [2]]");
  EXPECT_EQ(infix("(\\begin{matrix}5\\\\6\\end{matrix})"), "[[5], [6]]");
  EXPECT_TRUE(parse_answer("\\begin{pmatrix}1&2\\\\3\\end{pmatrix}").is_text_fallback);
}

TEST(MathParser, ExpandsPlusMinusIntoAList) {
  EXPECT_EQ(infix("2\\pm\\sqrt{3}"), "2+sqrt(3), 2-sqrt(3)");
  EXPECT_EQ(infix("\\pm3"), "3, -3");
}

TEST(MathParser, ListsWithAnd) {
  EXPECT_EQ(infix("1,2,\\text{and}3"), "1, 2, 3");
  EXPECT_EQ(infix("1\\text{and}2"), "1, 2");
}

TEST(MathParser, FallsBackToTextWithTheReason) {
  ParsedAnswer p = parse_answer("Evelyn");
  EXPECT_TRUE(p.is_text_fallback);
  EXPECT_EQ(p.value.kind, VK::kText);
  EXPECT_EQ(p.value.text, "Evelyn");
  EXPECT_FALSE(p.error.empty());
  EXPECT_TRUE(parse_answer("\\frac{1}{").is_text_fallback);
  EXPECT_TRUE(parse_answer("").is_text_fallback);
  EXPECT_TRUE(parse_answer("2 3").is_text_fallback);  // two numbers side by side
  EXPECT_TRUE(parse_answer("\\unknowncommand").is_text_fallback);
}

TEST(MathParser, DeepNestingDoesNotFail) {
  std::string deep = std::string(200, '(') + "1" + std::string(200, ')');
  EXPECT_EQ(infix(deep), "1");
}

}  // namespace
}  // namespace rlwb::rewards
