// Finding the final answer in a response (rewards/math/extract.h).
#include <gtest/gtest.h>

#include "rewards/math/extract.h"

namespace rlwb::rewards {
namespace {

ExtractedAnswer extract(std::string_view text, bool last_number = false) {
  return extract_answer(text, {.last_number_fallback = last_number});
}

TEST(MathExtract, TakesTheLastBoxed) {
  ExtractedAnswer a = extract("try \\boxed{3} then \\boxed{4}.");
  EXPECT_EQ(a.text, "4");
  EXPECT_EQ(a.source, AnswerSource::kBoxed);
}

TEST(MathExtract, MatchesNestedBraces) {
  EXPECT_EQ(extract("$\\boxed{\\frac{\\sqrt{3}}{2}}$").text, "\\frac{\\sqrt{3}}{2}");
}

TEST(MathExtract, EscapedBracesNeitherOpenNorClose) {
  EXPECT_EQ(extract("\\boxed{\\{1, 2\\}}").text, "\\{1, 2\\}");
  EXPECT_EQ(extract("\\boxed{\\}}").text, "\\}");
}

TEST(MathExtract, FboxCountsAsABox) {
  ExtractedAnswer a = extract("so \\fbox{12} it is");
  EXPECT_EQ(a.text, "12");
  EXPECT_EQ(a.source, AnswerSource::kBoxed);
}

TEST(MathExtract, BoxedWithoutBracesTakesOneToken) { EXPECT_EQ(extract("Hence $\\boxed 7$.").text, "7"); }

TEST(MathExtract, SkipsAnUnclosedLastBox) {
  EXPECT_EQ(extract("\\boxed{5} and finally \\boxed{x^2 +").text, "5");
  std::string content;
  EXPECT_FALSE(find_last_boxed("\\boxed{x", &content));
}

TEST(MathExtract, OtherCommandsStartingWithBoxedAreNotBoxes) {
  std::string content;
  EXPECT_FALSE(find_last_boxed("\\boxedcolor{3}", &content));
}

TEST(MathExtract, BoxBeatsHashesAndAnswerLines) {
  EXPECT_EQ(extract("Answer: 3\n#### 4\n\\boxed{5}").text, "5");
}

TEST(MathExtract, HashesTakeTheRestOfTheirLine) {
  ExtractedAnswer a = extract("48/2 = 24\n#### 72\n");
  EXPECT_EQ(a.text, "72");
  EXPECT_EQ(a.source, AnswerSource::kHashes);
  EXPECT_EQ(extract("#### 5\n#### 6").text, "6");
}

TEST(MathExtract, AnswerLineStopsAtTheSentenceEnd) {
  ExtractedAnswer a = extract("Work...\nAnswer: 3.5. Then we check.");
  EXPECT_EQ(a.text, "3.5");
  EXPECT_EQ(a.source, AnswerSource::kAnswerLine);
  EXPECT_EQ(extract("**Answer:** 8").text, "8");
}

TEST(MathExtract, MinervaSignOffIsDropped) {
  EXPECT_EQ(extract("Final Answer: The final answer is $x^2-1$. I hope it is correct.").text, "x^2-1");
}

TEST(MathExtract, TheAnswerIsCounts) { EXPECT_EQ(extract("so the answer is 12").text, "12"); }

TEST(MathExtract, AFormulaAloneIsTheAnswer) {
  ExtractedAnswer a = extract("  $\\frac{3}{5}$ ");
  EXPECT_EQ(a.text, "$\\frac{3}{5}$");
  EXPECT_EQ(a.source, AnswerSource::kWholeText);
  EXPECT_EQ(extract("x = 7").text, "x = 7");
  EXPECT_EQ(extract("20 dollars").text, "20 dollars");
  EXPECT_EQ(extract("Monday").text, "Monday");
}

TEST(MathExtract, ProseIsNoAnswer) {
  ExtractedAnswer a = extract("We get 5 apples in the end");
  EXPECT_EQ(a.source, AnswerSource::kNone);
  EXPECT_EQ(a.text, "");
}

TEST(MathExtract, LastNumberOnlyWhenAsked) {
  EXPECT_EQ(extract("She has 5 apples left.").source, AnswerSource::kNone);
  ExtractedAnswer a = extract("She had 3, now 1,250 apples.", true);
  EXPECT_EQ(a.text, "1,250");
  EXPECT_EQ(a.source, AnswerSource::kLastNumber);
  EXPECT_EQ(extract("It is -5 degrees now", true).text, "-5");
  EXPECT_EQ(extract("Took 2.5 hours.", true).text, "2.5");
  EXPECT_EQ(extract("no digits", true).source, AnswerSource::kNone);
}

TEST(MathExtract, ReferencesAreTakenWholeWhenUnmarked) {
  ExtractedAnswer a = extract_answer("\\text{all real numbers}", {.whole_text_always = true});
  EXPECT_EQ(a.text, "\\text{all real numbers}");
  EXPECT_EQ(a.source, AnswerSource::kWholeText);
}

TEST(MathExtract, SourceNamesAreStable) {
  EXPECT_STREQ(answer_source_name(AnswerSource::kBoxed), "boxed");
  EXPECT_STREQ(answer_source_name(AnswerSource::kHashes), "hashes");
  EXPECT_STREQ(answer_source_name(AnswerSource::kAnswerLine), "answer_line");
  EXPECT_STREQ(answer_source_name(AnswerSource::kWholeText), "whole_text");
  EXPECT_STREQ(answer_source_name(AnswerSource::kLastNumber), "last_number");
  EXPECT_STREQ(answer_source_name(AnswerSource::kNone), "none");
}

}  // namespace
}  // namespace rlwb::rewards
