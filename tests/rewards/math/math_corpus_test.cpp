// The labelled corpus (tests/rewards/math/math_corpus.jsonl): every case's verdict,
// reported line by line, and the corpus's size and coverage of the checker's rules.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"
#include "tests/test_paths.h"

namespace rlwb::rewards {
namespace {

const std::string kCorpus = std::string(rlwb::testing::kSourceDir) + "/tests/rewards/math/math_corpus.jsonl";

struct LabelledCase {
  MathCase c;
  int verdict = 0;
  std::string rule;
};

// The labels are not about time bounds: give GiNaC time even on a loaded machine.
MathCheckOptions patient_defaults() {
  MathCheckOptions o;
  o.symbolic_timeout = std::chrono::seconds(20);
  return o;
}

std::vector<LabelledCase> load_corpus() {
  std::ifstream in(kCorpus);
  EXPECT_TRUE(in.good()) << "cannot open " << kCorpus;
  std::vector<LabelledCase> cases;
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    LabelledCase lc;
    lc.c = parse_math_case(text, line, kCorpus, patient_defaults());
    lc.verdict = lc.c.object.at("verdict").get<int>();
    lc.rule = lc.c.object.at("rule").get<std::string>();
    cases.push_back(std::move(lc));
  }
  return cases;
}

TEST(MathCorpus, EveryCaseGetsItsLabelledVerdict) {
  std::vector<LabelledCase> cases = load_corpus();
  size_t wrong = 0;
  for (const LabelledCase& lc : cases) {
    MathVerdict v = check_math_answer(lc.c.response, lc.c.reference, lc.c.options, lc.c.question);
    if (v.score == lc.verdict) continue;
    ++wrong;
    ADD_FAILURE() << "math_corpus.jsonl:" << lc.c.line << " [" << lc.rule << "] response " << lc.c.response
                  << " | reference " << lc.c.reference << " | expected " << lc.verdict << ", got " << v.score
                  << " | extracted '" << v.extracted << "' -> " << v.parsed_prediction << " vs "
                  << v.parsed_reference << " | reason: " << v.reason;
  }
  EXPECT_EQ(wrong, 0u) << "of " << cases.size() << " cases";
}

TEST(MathCorpus, HasAtLeast300CasesCoveringEveryRuleBothWays) {
  std::vector<LabelledCase> cases = load_corpus();
  EXPECT_GE(cases.size(), 300u);
  std::map<std::string, std::set<int>> verdicts_by_rule;
  for (const LabelledCase& lc : cases) verdicts_by_rule[lc.rule].insert(lc.verdict);
  const std::vector<std::string> rules = {"extract_boxed",
                                          "extract_hashes",
                                          "extract_answer_line",
                                          "extract_last_number",
                                          "extract_whole_text",
                                          "norm_left_right",
                                          "norm_spacing",
                                          "norm_frac_spellings",
                                          "norm_sqrt",
                                          "norm_units_text",
                                          "norm_degrees",
                                          "norm_percent",
                                          "norm_thousands",
                                          "norm_leading_var",
                                          "norm_dollar",
                                          "norm_trailing_period",
                                          "rational",
                                          "numeric",
                                          "symbolic",
                                          "interval",
                                          "set_tuple",
                                          "matrix",
                                          "inequality",
                                          "equation",
                                          "infinity",
                                          "text_choice",
                                          "final_form",
                                          "robust"};
  for (const std::string& rule : rules) {
    ASSERT_TRUE(verdicts_by_rule.count(rule)) << "no case for rule " << rule;
    // Each rule needs a matching and (except the pure clean-up rules) a non-matching case.
    if (rule != "norm_dollar" && rule != "norm_trailing_period") {
      EXPECT_EQ(verdicts_by_rule[rule].size(), 2u) << "rule " << rule << " is tested one way only";
    }
  }
}

}  // namespace
}  // namespace rlwb::rewards
