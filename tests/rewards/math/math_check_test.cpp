// The checker's public API (rewards/math/math_check.h): what a verdict holds,
// the batch function, options, the asymmetric rules, the time bound, threads.
#include "rewards/math/math_check.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>

namespace rlwb::rewards {
namespace {

// Options whose GiNaC time bound a loaded test machine will not hit (the
// tests of the bound itself set their own).
MathCheckOptions patient(MathCheckOptions o = {}) {
  o.symbolic_timeout = std::chrono::seconds(20);
  return o;
}

TEST(MathCheck, VerdictNamesWhatWasExtractedAndWhy) {
  MathVerdict v = check_math_answer("So $x = \\boxed{\\dfrac12}$.", "0.5");
  EXPECT_EQ(v.score, 1);
  EXPECT_EQ(v.extracted, "\\dfrac12");
  EXPECT_EQ(v.extracted_from, "boxed");
  EXPECT_EQ(v.reference_answer, "0.5");
  EXPECT_EQ(v.normalized_prediction, "\\frac{1}{2}");
  EXPECT_EQ(v.normalized_reference, "0.5");
  EXPECT_EQ(v.parsed_prediction, "1/2");
  EXPECT_EQ(v.parsed_reference, "1/2");
  EXPECT_EQ(v.method, MatchMethod::kExactRational);
  EXPECT_EQ(v.reason, "equal as exact rationals: 1/2");
}

TEST(MathCheck, NoAnswerScoresZeroAndSaysSo) {
  MathVerdict v = check_math_answer("I am not sure.", "5");
  EXPECT_EQ(v.score, 0);
  EXPECT_EQ(v.extracted_from, "none");
  EXPECT_NE(v.reason.find("no answer"), std::string::npos);
  EXPECT_NE(v.reason.find("last-number"), std::string::npos);
}

TEST(MathCheck, WrongAnswerSaysHowItDiffers) {
  MathVerdict v = check_math_answer("\\boxed{4}", "5");
  EXPECT_EQ(v.score, 0);
  EXPECT_EQ(v.reason, "different numbers: 4 vs 5");
}

TEST(MathCheck, ReportsTheMethodThatDecided) {
  EXPECT_EQ(check_math_answer("5", "5").method, MatchMethod::kSameText);
  EXPECT_EQ(check_math_answer("\\sqrt{12}", "2\\sqrt3").method, MatchMethod::kNumeric);
  EXPECT_EQ(check_math_answer("(x+1)^2", "x^2+2x+1", patient()).method, MatchMethod::kSymbolic);
  EXPECT_EQ(check_math_answer("2\\sin x\\cos x", "\\sin 2x", patient()).method,
            MatchMethod::kNumericIdentity);
  EXPECT_EQ(check_math_answer("\\text{Evelyn}", "evelyn").method, MatchMethod::kText);
  EXPECT_STREQ(match_method_name(MatchMethod::kNumericIdentity), "numeric_identity");
}

TEST(MathCheck, PercentFollowsTheSetting) {
  MathCheckOptions fraction, either;
  fraction.percent = PercentRule::kFraction;
  either.percent = PercentRule::kEither;
  EXPECT_EQ(check_math_answer("50\\%", "50").score, 1);
  EXPECT_EQ(check_math_answer("50\\%", "0.5").score, 0);
  EXPECT_EQ(check_math_answer("50\\%", "0.5", fraction).score, 1);
  EXPECT_EQ(check_math_answer("50\\%", "50", fraction).score, 0);
  EXPECT_EQ(check_math_answer("50\\%", "0.5", either).score, 1);
  EXPECT_EQ(check_math_answer("50\\%", "50", either).score, 1);
}

TEST(MathCheck, LastNumberFallbackIsAnOption) {
  MathCheckOptions fallback;
  fallback.last_number_fallback = true;
  EXPECT_EQ(check_math_answer("She has 5 left.", "5").score, 0);
  MathVerdict v = check_math_answer("She has 5 left.", "5", fallback);
  EXPECT_EQ(v.score, 1);
  EXPECT_EQ(v.extracted_from, "last_number");
}

TEST(MathCheck, ToleranceAndRoundingAreOptions) {
  MathCheckOptions loose, rounding;
  loose.relative_tolerance = 1e-4;
  rounding.rounding_min_places = 2;
  EXPECT_EQ(check_math_answer("3.1416", "\\pi").score, 0);
  EXPECT_EQ(check_math_answer("3.1416", "\\pi", loose).score, 1);
  EXPECT_EQ(check_math_answer("3.14", "\\pi", rounding).score, 1);
  EXPECT_EQ(check_math_answer("3.1", "\\pi", rounding).score, 0);  // one place: too few
  EXPECT_EQ(check_math_answer("0.3333333", "\\frac13").score, 1);  // default: six places
}

TEST(MathCheck, AnUnevaluatedExpressionDoesNotMatchANumber) {
  MathVerdict v = check_math_answer("2+3", "5");
  EXPECT_EQ(v.score, 0);
  EXPECT_NE(v.reason.find("expression to evaluate"), std::string::npos);
  EXPECT_EQ(check_math_answer("5", "2+3").score, 1);  // the reverse is fine
  MathCheckOptions values_only;
  values_only.require_final_form = false;
  EXPECT_EQ(check_math_answer("2+3", "5", values_only).score, 1);
}

TEST(MathCheck, AnUnsimplifiedFractionDoesNotMatchAPolynomial) {
  EXPECT_EQ(check_math_answer("\\frac{x^2-1}{x-1}", "x+1").score, 0);
  EXPECT_EQ(check_math_answer("x+1", "\\frac{x^2-1}{x-1}", patient()).score, 1);
}

TEST(MathCheck, RestatingTheQuestionDoesNotMatch) {
  const char* question = "Expand $(x+1)^2$.";
  MathVerdict v = check_math_answer("(x+1)^2", "x^2+2x+1", {}, question);
  EXPECT_EQ(v.score, 0);
  EXPECT_NE(v.reason.find("restates"), std::string::npos);
  EXPECT_EQ(check_math_answer("(x+1)^2", "x^2+2x+1", patient()).score, 1);  // no question
  EXPECT_EQ(check_math_answer("x^2+2x+1", "x^2+2x+1", {}, question).score, 1);
  // Plain numbers are never "copied": questions are full of them.
  EXPECT_EQ(check_math_answer("0.5", "\\frac12", {}, "Heads has probability 0.5. P(H)?").score, 1);
}

TEST(MathCheck, UnsolvedInequalityDoesNotMatchASolvedOne) {
  EXPECT_EQ(check_math_answer("2x<6", "x<3").score, 0);
  EXPECT_EQ(check_math_answer("3>x", "x<3").score, 1);
}

TEST(MathCheck, SymbolicTimeBoundCountsAsNotEqual) {
  MathCheckOptions hurried;
  hurried.symbolic_timeout = std::chrono::milliseconds(1);
  // Equal, but proving it means expanding a power with thousands of terms.
  MathVerdict v = check_math_answer("(x+y+z+w+1)^{11}(x-y)", "(x+y+z+w+1)^{11}x-(x+y+z+w+1)^{11}y", hurried);
  EXPECT_EQ(v.score, 0);
  EXPECT_NE(v.reason.find("counted as not equal"), std::string::npos) << v.reason;
  // The engine recovers once the abandoned simplification ends.
  MathVerdict later;
  for (int i = 0; i < 600; ++i) {
    later = check_math_answer("(x+1)^2", "x^2+2x+1", patient());
    if (later.score == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(later.score, 1) << later.reason;
}

TEST(MathCheck, HugeExpressionsAreRefusedNotSimplified) {
  // Equal at every sample point, but GiNaC would expand about 46000 terms.
  MathVerdict v = check_math_answer("(x+y+z+w+1)^{30}", "(1+x+y+z+w)^{30}");
  EXPECT_EQ(v.score, 0);
  EXPECT_NE(v.reason.find("too large for the symbolic check"), std::string::npos) << v.reason;
  EXPECT_NE(v.reason.find("terms"), std::string::npos) << v.reason;
  // A power alone is no large expansion: GiNaC still tells these apart.
  MathVerdict off_by_one = check_math_answer("(x+1)^{1000}", "(1+x)^{1000}+1", patient());
  EXPECT_EQ(off_by_one.score, 0);
  EXPECT_EQ(off_by_one.reason, "GiNaC: the difference is -1, not 0");
}

TEST(MathCheck, BatchKeepsOrderAndChecksLengths) {
  std::vector<MathVerdict> v = check_math_answers({"\\boxed{1}", "\\boxed{3}", "#### 3"}, {"1", "2", "3"});
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].score, 1);
  EXPECT_EQ(v[1].score, 0);
  EXPECT_EQ(v[2].score, 1);
  EXPECT_THROW(check_math_answers({"1", "2"}, {"1"}), std::invalid_argument);
  EXPECT_THROW(check_math_answers({"1"}, {"1"}, {}, {"q1", "q2"}), std::invalid_argument);
  std::vector<MathVerdict> q = check_math_answers({"(x+1)^2"}, {"x^2+2x+1"}, {}, {"Expand (x+1)^2"});
  EXPECT_EQ(q[0].score, 0);
}

// The batch prepares each distinct reference once and hands a repeated row
// (same response, reference and question) the first one's verdict; every
// verdict must still be the one row-by-row checking gives, field by field.
TEST(MathCheck, BatchGivesEachRowTheVerdictItWouldHaveAlone) {
  const std::vector<std::string> responses = {"\\boxed{85}",
                                              "#### 85",
                                              "\\boxed{85}",
                                              "\\boxed{75}",
                                              "Answer: 1+",
                                              "\\boxed{85}",
                                              "",
                                              "\\boxed{(x+1)^2}",
                                              "\\boxed{(x+1)^2}",
                                              "\\boxed{(x+1)^2}",
                                              "\\boxed{x^2+2x+1}",
                                              "\\boxed{2=}",
                                              "\\boxed{2=}",
                                              "\\boxed{1/2}"};
  const std::vector<std::string> references = {"85",       "85", "85",       "85",       "85",
                                               "75",       "85", "x^2+2x+1", "x^2+2x+1", "x^2+2x+1",
                                               "x^2+2x+1", "",   "2",        "0.5"};
  // Rows 7 and 8 differ only in the question (row 8 restates it); row 9
  // repeats row 7.
  const std::vector<std::string> questions = {
      "", "", "", "", "", "", "", "Simplify", "Expand (x+1)^2", "Simplify", "", "", "", ""};
  for (const MathCheckOptions& options : {patient(), patient({.compat = CompatMode::kMathVerify})}) {
    for (bool with_questions : {false, true}) {
      const std::vector<std::string> q = with_questions ? questions : std::vector<std::string>{};
      std::vector<MathVerdict> batch = check_math_answers(responses, references, options, q);
      ASSERT_EQ(batch.size(), responses.size());
      for (size_t i = 0; i < responses.size(); ++i) {
        MathVerdict alone =
            check_math_answer(responses[i], references[i], options, with_questions ? q[i] : "");
        SCOPED_TRACE("row " + std::to_string(i) + ": " + responses[i] + " vs " + references[i]);
        EXPECT_EQ(batch[i].score, alone.score);
        EXPECT_EQ(batch[i].extracted, alone.extracted);
        EXPECT_EQ(batch[i].extracted_from, alone.extracted_from);
        EXPECT_EQ(batch[i].reference_answer, alone.reference_answer);
        EXPECT_EQ(batch[i].normalized_prediction, alone.normalized_prediction);
        EXPECT_EQ(batch[i].normalized_reference, alone.normalized_reference);
        EXPECT_EQ(batch[i].parsed_prediction, alone.parsed_prediction);
        EXPECT_EQ(batch[i].parsed_reference, alone.parsed_reference);
        EXPECT_EQ(batch[i].method, alone.method);
        EXPECT_EQ(batch[i].reason, alone.reason);
      }
      EXPECT_EQ(batch[0].score, 1);
      EXPECT_EQ(batch[3].score, 0);
      EXPECT_EQ(batch[5].score, 0);  // the same response against another reference
      EXPECT_EQ(batch[11].reason, "the reference is empty");
      if (with_questions && options.compat == CompatMode::kDefault) {
        EXPECT_EQ(batch[7].score, 1);
        EXPECT_EQ(batch[8].score, 0);  // restates the question
      }
    }
  }
}

TEST(MathCheck, NeverThrowsOnArbitraryText) {
  std::mt19937 rng(7);
  const std::string alphabet = "\\{}[]()^_$&,.=<>|!%0123456789xyzabc+-*/ \n";
  const char* pieces[] = {"\\frac",           "\\sqrt",         "\\boxed{", "\\left",
                          "\\begin{pmatrix}", "\\end{pmatrix}", "\\text{",  "\\cup",
                          "\\infty",          "\\pm",           "\\\\"};
  for (int i = 0; i < 2000; ++i) {
    std::string a, b;
    for (int k = 0; k < 30; ++k) {
      if (rng() % 4 == 0)
        a += pieces[rng() % std::size(pieces)];
      else
        a += alphabet[rng() % alphabet.size()];
      b += alphabet[rng() % alphabet.size()];
    }
    MathVerdict v;
    EXPECT_NO_THROW(v = check_math_answer(a, b)) << a;
    EXPECT_TRUE(v.score == 0 || v.score == 1);
    EXPECT_FALSE(v.reason.empty()) << a << " | " << b;
  }
}

TEST(MathCheck, ThreadsGetTheSameVerdictsAsOneThread) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"(x+1)^2", "x^2+2x+1"}, {"\\frac{1}{2}", "0.5"}, {"x^3-1", "(x-1)(x^2+x+1)"},
      {"(1,2)", "(2,1)"},      {"a^2-b^2", "a^2+b^2"},  {"\\frac{x+y}{xy}", "\\frac1x+\\frac1y"}};
  std::vector<int> expected;
  for (auto& [p, r] : cases) expected.push_back(check_math_answer(p, r, patient()).score);
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        for (size_t i = 0; i < cases.size(); ++i)
          if (check_math_answer(cases[i].first, cases[i].second, patient()).score != expected[i])
            ++mismatches;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(expected, (std::vector<int>{1, 1, 1, 0, 0, 1}));
}

}  // namespace
}  // namespace rlwb::rewards
