// Finding the final answer in a model's response (or in a reference solution).
//
// In order of preference:
//   1. the last complete \boxed{...} or \fbox{...} (nested braces are matched;
//      a truncated box that never closes is skipped);
//   2. the text after the last GSM8K-style "####" on its line;
//   3. the text after the last "Answer:" or "answer is" on its line, up to the
//      end of its sentence ("The final answer is $5$. I hope it is correct." and
//      "The answer is 5. Done." give 5);
//   4. the whole text, when it is one short line that reads as a formula rather
//      than prose ("0.5", "$x = 3$", "\frac{1}{2}", a single word; not
//      "We get 5 apples");
//   5. only when asked: the last number in the text.
// Used by rewards/math/math_check.cpp for both sides of a check.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace rlwb::rewards {

enum class AnswerSource {
  kNone,        // nothing found
  kBoxed,       // \boxed{...} or \fbox{...}
  kHashes,      // #### 42
  kAnswerLine,  // Answer: ...  /  The final answer is ...
  kWholeText,   // the text itself is the answer
  kLastNumber,  // fallback: the last number in the text
  kLastLatex,   // compat mode: the last $...$, \(...\) or \[...\] (compat_extract.h)
};
const char* answer_source_name(AnswerSource source);  // "boxed", "hashes", ...

struct ExtractOptions {
  bool last_number_fallback = false;  // step 5
  bool whole_text_always = false;     // step 4 without the "reads as a formula" test
                                      // (for references, which are answers already)
};

struct ExtractedAnswer {
  std::string text;  // the answer as written, before normalisation; "" when none
  AnswerSource source = AnswerSource::kNone;
};

ExtractedAnswer extract_answer(std::string_view response, const ExtractOptions& options = {});

// The content of the last complete \boxed{} / \fbox{} in text, if any.
bool find_last_boxed(std::string_view text, std::string* content);

// The contents of every complete \boxed{} / \fbox{} in text, in order.
std::vector<std::string> find_all_boxed(std::string_view text);

}  // namespace rlwb::rewards
