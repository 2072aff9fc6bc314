// The math-verify-compatible mode (MathCheckOptions::compat) against
// math-verify's own verdicts on tests/rewards/math/compat_corpus.jsonl, which
// make_compat_corpus.py generates and labels. Every disagreement is printed
// with RLWB's reason; an accept where math-verify rejects must be listed, with
// its reason, in compat_deliberate.jsonl.
#include <gtest/gtest.h>

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "rewards/math/math_check.h"
#include "rewards/math/math_jsonl.h"
#include "tests/test_paths.h"

namespace rlwb::rewards {
namespace {

const std::string kDir = std::string(rlwb::testing::kSourceDir) + "/tests/rewards/math/";

struct CompatCase {
  MathCase c;
  std::string id, style, form;
  int math_verify = 0;
};

std::vector<CompatCase> load_corpus() {
  const std::string path = kDir + "compat_corpus.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path
                         << "; regenerate it with tests/rewards/math/make_compat_corpus.py";
  MathCheckOptions compat;
  compat.compat = CompatMode::kMathVerify;
  compat.symbolic_timeout = std::chrono::seconds(20);  // verdicts, not time bounds, are tested here
  std::vector<CompatCase> out;
  std::string text;
  for (size_t line = 1; std::getline(in, text); ++line) {
    if (text.empty()) continue;
    CompatCase cc;
    cc.c = parse_math_case(text, line, path, compat);
    cc.id = cc.c.object.at("id").get<std::string>();
    cc.style = cc.c.object.at("style").get<std::string>();
    cc.form = cc.c.object.at("form").get<std::string>();
    cc.math_verify = cc.c.object.at("verdict").get<int>();
    out.push_back(std::move(cc));
  }
  return out;
}

// id -> why RLWB deliberately differs there.
std::map<std::string, std::string> load_deliberate() {
  const std::string path = kDir + "compat_deliberate.jsonl";
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::map<std::string, std::string> out;
  std::string text;
  while (std::getline(in, text)) {
    if (text.empty()) continue;
    auto j = nlohmann::json::parse(text);
    out[j.at("id").get<std::string>()] = j.at("reason").get<std::string>();
  }
  return out;
}

TEST(MathCompat, CorpusHasAtLeast1000CasesInTheFourStyles) {
  std::vector<CompatCase> cases = load_corpus();
  EXPECT_GE(cases.size(), 1000u);
  std::map<std::string, std::set<int>> verdicts_by_style;
  for (const CompatCase& cc : cases) verdicts_by_style[cc.style].insert(cc.math_verify);
  for (const char* style : {"gsm8k", "math", "numina", "openthoughts"})
    EXPECT_EQ(verdicts_by_style[style], (std::set<int>{0, 1})) << style << " needs accepts and rejects";
}

TEST(MathCompat, AgreesWithMathVerifyOnAtLeast97PercentAndNeverAcceptsMoreUnlessListed) {
  std::vector<CompatCase> cases = load_corpus();
  std::map<std::string, std::string> deliberate = load_deliberate();
  size_t agree = 0;
  std::set<std::string> listed_and_seen;
  for (const CompatCase& cc : cases) {
    MathVerdict v = check_math_answer(cc.c.response, cc.c.reference, cc.c.options);
    if (v.score == cc.math_verify) {
      ++agree;
      continue;
    }
    auto listed = deliberate.find(cc.id);
    std::string why =
        listed == deliberate.end() ? "NOT LISTED as deliberate" : "deliberate: " + listed->second;
    if (listed != deliberate.end()) listed_and_seen.insert(cc.id);
    std::cout << "disagreement " << cc.id << " [" << cc.form << "] RLWB " << v.score << ", math-verify "
              << cc.math_verify << " | extracted '" << v.extracted << "' (" << v.extracted_from << ") vs '"
              << v.reference_answer << "' | RLWB: " << v.reason << " | " << why << "\n";
    if (v.score == 1 && listed == deliberate.end())
      ADD_FAILURE() << cc.id << ": RLWB accepts where math-verify rejects, and compat_deliberate.jsonl "
                    << "gives no reason: " << cc.c.response << " | " << cc.c.reference << " | " << v.reason;
  }
  double agreement = static_cast<double>(agree) / static_cast<double>(cases.size());
  std::cout << "agreement with math-verify: " << agree << "/" << cases.size() << " = " << 100 * agreement
            << "%\n";
  EXPECT_GE(agreement, 0.97);
  for (const auto& [id, reason] : deliberate)
    EXPECT_TRUE(listed_and_seen.count(id))
        << "compat_deliberate.jsonl lists " << id << ", which is no disagreement (any more); remove it";
}

}  // namespace
}  // namespace rlwb::rewards
