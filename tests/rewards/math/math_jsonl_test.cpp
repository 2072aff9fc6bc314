// JSON Lines in and out (rewards/math/math_jsonl.h): what `rlwb reward math
// --file` writes, and how it reports a bad line without losing earlier ones.
#include "rewards/math/math_jsonl.h"

#include <gtest/gtest.h>

#include <sstream>

namespace rlwb::rewards {
namespace {

std::vector<nlohmann::json> lines_of(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(nlohmann::json::parse(line));
  return out;
}

TEST(MathJsonl, WritesOneVerdictLinePerInputInOrder) {
  std::istringstream in(R"({"response": "\\boxed{2}", "reference": "2", "id": "a"})"
                        "\n"
                        "\n"
                        R"({"response": "#### 7", "reference": "8"})"
                        "\n"
                        R"({"response": "x = 3", "reference": "3", "question": "Solve x-3=0"})"
                        "\n");
  std::ostringstream out;
  MathJsonlSummary s = score_math_jsonl(in, out, "in.jsonl", {});
  EXPECT_EQ(s.checked, 3u);
  EXPECT_EQ(s.correct, 2u);
  std::vector<nlohmann::json> got = lines_of(out.str());
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0]["line"], 1);
  EXPECT_EQ(got[0]["id"], "a");
  EXPECT_EQ(got[0]["score"], 1);
  EXPECT_EQ(got[0]["extracted"], "2");
  EXPECT_EQ(got[0]["extracted_from"], "boxed");
  EXPECT_EQ(got[1]["line"], 3);  // the blank line is skipped but counted
  EXPECT_EQ(got[1]["score"], 0);
  EXPECT_EQ(got[1]["extracted"], "7");
  EXPECT_FALSE(got[1].contains("id"));
  EXPECT_EQ(got[2]["score"], 1);
  for (const char* key : {"normalized", "reference_normalized", "method", "reason"})
    EXPECT_TRUE(got[2].contains(key)) << key;
  // "line" comes first, then the verdict's keys in a fixed order.
  EXPECT_EQ(out.str().rfind("{\"line\":1,\"id\":\"a\",\"score\":1,\"extracted\":\"2\",", 0), 0u) << out.str();
}

TEST(MathJsonl, PerLineOptionsOverrideTheDefaults) {
  std::istringstream in(R"({"response": "50\\%", "reference": "0.5"})"
                        "\n"
                        R"({"response": "50\\%", "reference": "0.5", "options": {"percent": "fraction"}})"
                        "\n");
  std::ostringstream out;
  score_math_jsonl(in, out, "in.jsonl", {});
  std::vector<nlohmann::json> got = lines_of(out.str());
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0]["score"], 0);
  EXPECT_EQ(got[1]["score"], 1);
}

// The error for line 3 of `text`, with lines 1 and 2 already written.
std::string error_at_line_3(const std::string& bad_line, std::string* written) {
  std::istringstream in(std::string(R"({"response": "1", "reference": "1"})") + "\n" +
                        R"({"response": "2", "reference": "2"})" + "\n" + bad_line + "\n" +
                        R"({"response": "4", "reference": "4"})" + "\n");
  std::ostringstream out;
  try {
    score_math_jsonl(in, out, "in.jsonl", {});
  } catch (const MathJsonlError& e) {
    EXPECT_EQ(e.line(), 3u);
    *written = out.str();
    return e.what();
  }
  ADD_FAILURE() << "no error for " << bad_line;
  return "";
}

TEST(MathJsonl, InvalidJsonNamesTheLineAndKeepsEarlierOutput) {
  std::string written;
  std::string message = error_at_line_3(R"({"response": "3", "reference": )", &written);
  EXPECT_NE(message.find("in.jsonl:3: not valid JSON"), std::string::npos) << message;
  EXPECT_NE(message.find("fix line 3 and run again"), std::string::npos) << message;
  EXPECT_NE(message.find("Lines before 3 were checked and written"), std::string::npos);
  std::vector<nlohmann::json> got = lines_of(written);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1]["line"], 2);
}

TEST(MathJsonl, MissingOrMistypedFieldsAreNamed) {
  std::string written;
  EXPECT_NE(error_at_line_3(R"({"response": "3"})", &written).find("no \"reference\" field"),
            std::string::npos);
  EXPECT_NE(error_at_line_3(R"({"response": "3", "reference": 3})", &written)
                .find("\"reference\" must be a string, not a number"),
            std::string::npos);
  EXPECT_NE(error_at_line_3(R"(["3", "3"])", &written).find("not an object"), std::string::npos);
  EXPECT_NE(error_at_line_3(R"({"response": "3", "reference": "3", "options": {"percnt": "x"}})", &written)
                .find("unknown option 'percnt'"),
            std::string::npos);
  EXPECT_NE(
      error_at_line_3(R"({"response": "3", "reference": "3", "options": {"percent": "half"}})", &written)
          .find("percent must be drop_sign, fraction or either"),
      std::string::npos);
}

TEST(MathJsonl, FirstLineErrorSaysNothingWasWritten) {
  std::istringstream in("not json\n");
  std::ostringstream out;
  try {
    score_math_jsonl(in, out, "x.jsonl", {});
    FAIL() << "no error";
  } catch (const MathJsonlError& e) {
    EXPECT_NE(std::string(e.what()).find("Nothing was written"), std::string::npos);
  }
  EXPECT_EQ(out.str(), "");
}

TEST(MathJsonl, OptionsFromJsonReadEveryKey) {
  MathCheckOptions o = math_options_from_json({{"last_number_fallback", true},
                                               {"percent", "either"},
                                               {"relative_tolerance", 0.01},
                                               {"rounding_min_places", 2},
                                               {"require_final_form", false},
                                               {"accept_numeric_identity", false},
                                               {"symbolic_timeout_ms", 50}},
                                              {});
  EXPECT_TRUE(o.last_number_fallback);
  EXPECT_EQ(o.percent, PercentRule::kEither);
  EXPECT_DOUBLE_EQ(o.relative_tolerance, 0.01);
  EXPECT_EQ(o.rounding_min_places, 2);
  EXPECT_FALSE(o.require_final_form);
  EXPECT_FALSE(o.accept_numeric_identity);
  EXPECT_EQ(o.symbolic_timeout, std::chrono::milliseconds(50));
  EXPECT_THROW(math_options_from_json({{"last_number_fallback", "yes"}}, {}), std::invalid_argument);
  EXPECT_THROW(math_options_from_json({{"symbolic_timeout_ms", 0}}, {}), std::invalid_argument);
  EXPECT_THROW(math_options_from_json(nlohmann::ordered_json::array(), {}), std::invalid_argument);
}

TEST(MathJsonl, InvalidUtf8InTheOutputIsReplacedNotFatal) {
  MathVerdict v;
  v.extracted = "\xff\xfe";
  nlohmann::ordered_json j = verdict_to_json(v);
  EXPECT_NO_THROW(j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

}  // namespace
}  // namespace rlwb::rewards
