// The math-verify mode case by case: its extraction (compat_extract.h) and the
// rules it changes (math_check.h), each next to the default mode's verdict.
#include <gtest/gtest.h>

#include "rewards/math/compat_extract.h"
#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"

namespace rlwb::rewards {
namespace {

MathCheckOptions math_verify() {
  MathCheckOptions o;
  o.compat = CompatMode::kMathVerify;
  return o;
}

int compat_score(std::string_view response, std::string_view reference) {
  return check_math_answer(response, reference, math_verify()).score;
}
int default_score(std::string_view response, std::string_view reference) {
  return check_math_answer(response, reference).score;
}

struct Case {
  const char* response;
  const char* reference;
  int score;  // in the math-verify mode
};

void expect_compat(std::initializer_list<Case> cases) {
  for (const Case& c : cases)
    EXPECT_EQ(compat_score(c.response, c.reference), c.score) << c.response << " | " << c.reference;
}

TEST(MathVerifyExtract, SeveralBoxesAreTakenTogether) {
  ExtractedAnswer a = extract_answer_math_verify_style("so \\boxed{2} and \\boxed{5}, not \\boxed{7");
  EXPECT_EQ(a.text, "2, 5");
  EXPECT_EQ(a.source, AnswerSource::kBoxed);
  EXPECT_EQ(compat_score("The roots are \\boxed{2} and \\boxed{5}.", "5, 2"), 1);
  EXPECT_EQ(compat_score("The roots are \\boxed{2} and \\boxed{5}.", "5"), 0);
  EXPECT_EQ(default_score("The roots are \\boxed{2} and \\boxed{5}.", "5"), 1);  // the last box
}

TEST(MathVerifyExtract, WithoutABoxTheLastLatexOrNumber) {
  EXPECT_EQ(extract_answer_math_verify_style("We get $x = 2$ and the ratio is $\\frac{3}{4}$.").text,
            "\\frac{3}{4}");
  ExtractedAnswer n = extract_answer_math_verify_style("So $12$ apples, then 15 pears.");
  EXPECT_EQ(n.text, "15");
  EXPECT_EQ(n.source, AnswerSource::kLastNumber);
  EXPECT_EQ(extract_answer_math_verify_style("A total of 1,250 cents.").text, "1,250");
  EXPECT_EQ(extract_answer_math_verify_style("no numbers here").source, AnswerSource::kNone);
  EXPECT_EQ(compat_score("Counting, there are 42 of them.", "42"), 1);
  EXPECT_EQ(default_score("Counting, there are 42 of them.", "42"), 0);  // nothing marked
}

TEST(MathVerifyExtract, AnswerWordTakesTheFirstValueAfterIt) {
  EXPECT_EQ(extract_answer_math_verify_style("The answer is 5, then 7 more.").text, "5");
  EXPECT_EQ(extract_answer_math_verify_style(
                "Final Answer: The final answer is $\\frac{1}{2}$. I hope it is correct. 9")
                .text,
            "\\frac{1}{2}");
}

TEST(MathVerifyExtract, JoinedLatexAndEquationChains) {
  EXPECT_EQ(extract_answer_math_verify_style("so $x = 1$ or $x = 2$").text, "x = 1, x = 2");
  EXPECT_EQ(extract_answer_math_verify_style("$2 + 3 = 5$").text, "2 + 3 = 5");
  EXPECT_EQ(extract_answer_math_verify_style("$x = 2 + 3 = 5$").text, "5");
  EXPECT_EQ(extract_answer_math_verify_style("$a = 1, b = 2$").text, "a = 1, b = 2");
}

TEST(MathVerifyMode, UnevaluatedExpressionsEqualTheirValue) {
  const std::pair<const char*, const char*> kCases[] = {{"\\boxed{2^{10}}", "1024"},
                                                        {"\\boxed{5!}", "120"},
                                                        {"\\boxed{\\binom{5}{2}}", "10"},
                                                        {"\\boxed{\\log_2 8}", "3"}};
  for (auto [response, reference] : kCases) {
    SCOPED_TRACE(response);
    EXPECT_EQ(compat_score(response, reference), 1);
    EXPECT_EQ(default_score(response, reference), 0);  // the final-form rule
    EXPECT_EQ(compat_score(response, std::to_string(std::stoi(reference) + 1)), 0);
  }
}

TEST(MathVerifyMode, AssignmentsAndLabelledListsAgainstTheBareTuple) {
  expect_compat({
      {"\\boxed{(x, y) = (1, -2)}", "(1,-2)", 1},
      {"\\boxed{(x, y) = (1, -2)}", "(-2,1)", 0},
      {"\\boxed{a = 3, b = 4}", "(3, 4)", 1},
      {"\\boxed{x = 1 \\text{ or } x = 2}", "1, 2", 1},
      {"\\boxed{x = 1 \\text{ and } x = 3}", "1, 2", 0},
  });
}

TEST(MathVerifyMode, MatricesInAnyBracketStyle) {
  const char* ref = "\\begin{pmatrix}1&2\\\\3&4\\end{pmatrix}";
  for (const char* bmatrix : {"\\boxed{\\begin{bmatrix}1&2\\\\3&4\\end{bmatrix}}",
                              "\\boxed{\\left[\\begin{array}{cc}1&2\\\\3&4\\end{array}\\right]}"})
    EXPECT_EQ(compat_score(bmatrix, ref), 1) << bmatrix;
  EXPECT_EQ(compat_score("\\boxed{\\begin{bmatrix}1&2\\\\3&5\\end{bmatrix}}", ref), 0);
}

// math-verify rounds both sides to 6 places when either is a decimal.
TEST(MathVerifyMode, DecimalsCompareRoundedToSixPlaces) {
  expect_compat({
      {"\\boxed{0.333333}", "\\frac{1}{3}", 1},
      {"\\boxed{1.414214}", "\\sqrt{2}", 1},
      {"\\boxed{0.33}", "\\frac{1}{3}", 0},
      {"\\boxed{3.14}", "\\pi", 0},
      {"\\boxed{1.414215}", "\\sqrt{2}", 0},
  });
}

TEST(MathVerifyMode, PercentIsTheNumberOrItsFraction) {
  expect_compat({
      {"\\boxed{50\\%}", "50", 1},
      {"\\boxed{50\\%}", "0.5", 1},
      {"\\boxed{0.5}", "50", 0},
  });
}

TEST(MathVerifyMode, InequalitiesAgainstIntervals) {
  expect_compat({
      {"\\boxed{(2, \\infty)}", "x > 2", 1},
      {"\\boxed{[2, \\infty)}", "x > 2", 0},
  });
}

TEST(MathVerifyMode, IsNamedAndParsed) {
  EXPECT_STREQ(compat_mode_name(CompatMode::kMathVerify), "math-verify");
  EXPECT_STREQ(compat_mode_name(CompatMode::kDefault), "default");
  EXPECT_EQ(parse_compat_mode("math-verify"), CompatMode::kMathVerify);
  EXPECT_THROW(parse_compat_mode("sympy"), std::invalid_argument);
  MathCheckOptions o = math_options_from_json(nlohmann::ordered_json{{"compat", "math-verify"}}, {});
  EXPECT_EQ(o.compat, CompatMode::kMathVerify);
}

}  // namespace
}  // namespace rlwb::rewards
