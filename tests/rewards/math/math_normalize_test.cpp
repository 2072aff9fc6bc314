// String normalisation of answers (rewards/math/normalize.h): one test per rule.
#include <gtest/gtest.h>

#include "rewards/math/normalize.h"

namespace rlwb::rewards {
namespace {

TEST(MathNormalize, StripsMathDelimitersAndDollarSigns) {
  EXPECT_EQ(normalize_answer("$\\frac{1}{2}$"), "\\frac{1}{2}");
  EXPECT_EQ(normalize_answer("\\[ x+1 \\]"), "x+1");
  EXPECT_EQ(normalize_answer("\\(3\\)"), "3");
  EXPECT_EQ(normalize_answer("\\$5.00"), "5.00");
  EXPECT_EQ(normalize_answer("\\displaystyle 3"), "3");
}

TEST(MathNormalize, DropsLeftRightAndSizing) {
  EXPECT_EQ(normalize_answer("\\left( 1, 2 \\right]"), "(1,2]");
  EXPECT_EQ(normalize_answer("\\left. x \\right|"), "x|");
  EXPECT_EQ(normalize_answer("\\bigl(2\\bigr)"), "(2)");
  EXPECT_EQ(normalize_answer("\\leftarrow"), "\\leftarrow");  // another command
}

TEST(MathNormalize, DropsSpacingCommands) {
  EXPECT_EQ(normalize_answer("3\\!\\sqrt{2}"), "3\\sqrt{2}");
  EXPECT_EQ(normalize_answer("x \\; + \\quad 1"), "x+1");
  EXPECT_EQ(normalize_answer("2\\,\\pi"), "2\\pi");
}

TEST(MathNormalize, UnifiesFractionAndRelationSpellings) {
  EXPECT_EQ(normalize_answer("\\dfrac{3}{4}"), "\\frac{3}{4}");
  EXPECT_EQ(normalize_answer("\\tfrac{3}{4}"), "\\frac{3}{4}");
  EXPECT_EQ(normalize_answer("\\cfrac{3}{4}"), "\\frac{3}{4}");
  EXPECT_EQ(normalize_answer("\\dbinom{5}{2}"), "\\binom{5}{2}");
  EXPECT_EQ(normalize_answer("x \\leq 3"), "x\\le3");
  EXPECT_EQ(normalize_answer("x \\geqslant 3"), "x\\ge3");
  EXPECT_EQ(normalize_answer("x \\neq 3"), "x\\ne3");
}

TEST(MathNormalize, BracesSingleTokenArguments) {
  EXPECT_EQ(normalize_answer("\\frac12"), "\\frac{1}{2}");
  EXPECT_EQ(normalize_answer("\\frac1{2}"), "\\frac{1}{2}");
  EXPECT_EQ(normalize_answer("\\frac{1}2"), "\\frac{1}{2}");
  EXPECT_EQ(normalize_answer("\\frac\\pi2"), "\\frac{\\pi}{2}");
  EXPECT_EQ(normalize_answer("\\sqrt3"), "\\sqrt{3}");
  EXPECT_EQ(normalize_answer("2\\sqrt x"), "2\\sqrt{x}");
  EXPECT_EQ(normalize_answer("\\sqrt[3]8"), "\\sqrt[3]{8}");
}

TEST(MathNormalize, DropsDegrees) {
  EXPECT_EQ(normalize_answer("30^\\circ"), "30");
  EXPECT_EQ(normalize_answer("45^{\\circ}"), "45");
  EXPECT_EQ(normalize_answer("60\u00b0"), "60");
  EXPECT_EQ(normalize_answer("90 degrees"), "90");
}

TEST(MathNormalize, KeepsPercentAsOneToken) {
  EXPECT_EQ(normalize_answer("25%"), "25\\%");
  EXPECT_EQ(normalize_answer("25\\%"), "25\\%");
  EXPECT_EQ(normalize_answer("25 percent"), "25\\%");
}

TEST(MathNormalize, UnwrapsTextAroundTheWholeAnswer) {
  EXPECT_EQ(normalize_answer("\\text{(C)}"), "(C)");
  EXPECT_EQ(normalize_answer("\\textbf{Evelyn}"), "Evelyn");
  EXPECT_EQ(normalize_answer("\\text{ no solution }"), "no solution");
}

TEST(MathNormalize, DropsTrailingUnits) {
  EXPECT_EQ(normalize_answer("12\\text{ inches}"), "12");
  EXPECT_EQ(normalize_answer("5\\text{ cm}^2"), "5");
  EXPECT_EQ(normalize_answer("7 \\mbox{feet}"), "7");
  EXPECT_EQ(normalize_answer("20 dollars"), "20");
  EXPECT_EQ(normalize_answer("4 sq units"), "4");
  EXPECT_EQ(normalize_answer("15cm"), "15");
  EXPECT_EQ(normalize_answer("2xy"), "2xy");                        // a product, not a unit
  EXPECT_EQ(normalize_answer("x \\text{ or } y"), "x\\text{or}y");  // connectors stay
}

TEST(MathNormalize, DropsThousandsSeparators) {
  EXPECT_EQ(normalize_answer("1,000"), "1000");
  EXPECT_EQ(normalize_answer("-1,234,567.5"), "-1234567.5");
  EXPECT_EQ(normalize_answer("1{,}000"), "1000");
  EXPECT_EQ(normalize_answer("1\\,000"), "1000");
  EXPECT_EQ(normalize_answer("1 000 000"), "1000000");
  EXPECT_EQ(normalize_answer("1, 2"), "1,2");         // a list
  EXPECT_EQ(normalize_answer("10,00"), "10,00");      // not groups of three
  EXPECT_EQ(normalize_answer("(1,000)"), "(1,000)");  // a tuple (1, 0)
}

TEST(MathNormalize, DropsTrailingPunctuation) {
  EXPECT_EQ(normalize_answer("5."), "5");
  EXPECT_EQ(normalize_answer("3.5."), "3.5");
  EXPECT_EQ(normalize_answer("x^2,"), "x^2");
  EXPECT_EQ(normalize_answer("7\\."), "7");
}

TEST(MathNormalize, SpellsInfinityAndUnicode) {
  EXPECT_EQ(normalize_answer("infinity"), "\\infty");
  EXPECT_EQ(normalize_answer("-inf"), "-\\infty");
  EXPECT_EQ(normalize_answer("\u221e"), "\\infty");
  EXPECT_EQ(normalize_answer("\u22122"), "-2");
  EXPECT_EQ(normalize_answer("2\u03c0"), "2\\pi");
  EXPECT_EQ(normalize_answer("\\infin"), "\\infty");
}

TEST(MathNormalize, KeepsMatrixRowBreaks) {
  EXPECT_EQ(normalize_answer("\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}"),
            "\\begin{pmatrix}1\\\\2\\end{pmatrix}");
}

TEST(MathNormalize, KeepsSpacesThatSeparateLettersOrNumbers) {
  EXPECT_EQ(normalize_answer("\\pi r^2"), "\\pi r^2");
  EXPECT_EQ(normalize_answer("\\log_2 8"), "\\log_2 8");
  EXPECT_EQ(normalize_answer("x + 1"), "x+1");
}

}  // namespace
}  // namespace rlwb::rewards
