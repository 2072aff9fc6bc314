// The math checker over JSON Lines: `rlwb reward math --file`, the corpus test
// (tests/rewards/math/math_corpus_test.cpp) and bench/bench_math.cpp read the same format.
//
// One JSON object a line:
//   {"response": "... \\boxed{5}", "reference": "5"}            required
//   "question": "What is 2+3?"     optional, enables the restated-question rule
//   "options": {"percent": "fraction", "last_number_fallback": true, "compat": "math-verify", ...}
//                                  optional, overrides the defaults for that line
//   "id": anything                 optional, copied to the output line
// Other keys (a corpus's "verdict", "rule", "note") are ignored here.
// Blank lines are skipped. Output: one JSON object per input object, in order:
//   {"line": 3, "score": 1, "extracted": "5", "extracted_from": "boxed",
//    "normalized": "5", "reference_normalized": "5", "method": "same_text", "reason": "..."}
#pragma once

#include <cstddef>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <string_view>

#include "rewards/math/math_check.h"

namespace rlwb::rewards {

// A bad input line; what() names the source, the line and what to do.
class MathJsonlError : public std::runtime_error {
 public:
  MathJsonlError(const std::string& message, size_t line) : std::runtime_error(message), line_(line) {}
  size_t line() const { return line_; }

 private:
  size_t line_;
};

struct MathCase {
  size_t line = 0;
  std::string response;
  std::string reference;
  std::string question;
  MathCheckOptions options;
  nlohmann::ordered_json object;  // the whole input object
};

// "drop_sign" | "fraction" | "either"; std::invalid_argument otherwise.
PercentRule parse_percent_rule(std::string_view name);
const char* percent_rule_name(PercentRule rule);

// "default" | "math-verify" (compat_mode_name in math_check.h is the inverse);
// std::invalid_argument otherwise.
CompatMode parse_compat_mode(std::string_view name);

// Options from a JSON object on top of base; std::invalid_argument on an
// unknown key or a value of the wrong type (naming both).
MathCheckOptions math_options_from_json(const nlohmann::ordered_json& object, MathCheckOptions base);

// One line -> MathCase; MathJsonlError for invalid JSON, a non-object, a
// missing or non-string "response"/"reference", or bad "options".
MathCase parse_math_case(std::string_view text, size_t line, std::string_view source,
                         const MathCheckOptions& defaults);

// Keys in the order above, after "line" and "id".
nlohmann::ordered_json verdict_to_json(const MathVerdict& verdict);

struct MathJsonlSummary {
  size_t checked = 0;  // lines written
  size_t correct = 0;  // of them with score 1
};

// Checks every line of `in` and writes its verdict line to `out` at once
// (flushed), so that on a MathJsonlError every earlier line is already written.
MathJsonlSummary score_math_jsonl(std::istream& in, std::ostream& out, std::string_view source,
                                  const MathCheckOptions& defaults);

}  // namespace rlwb::rewards
