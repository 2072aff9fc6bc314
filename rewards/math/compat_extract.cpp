// math-verify-style answer extraction (see compat_extract.h).
#include "rewards/math/compat_extract.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::rewards {
namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// A piece of the response that can be an answer: [begin, end) of the whole
// match and the answer text inside it.
struct Span {
  size_t begin = 0, end = 0;
  std::string_view text;
};

// Every $...$, $$...$$, \(...\) and \[...\], left to right. An escaped \$ is a
// dollar sign, not a delimiter.
std::vector<Span> latex_spans(std::string_view s) {
  std::vector<Span> out;
  for (size_t i = 0; i < s.size();) {
    std::string_view close;
    size_t open_size = 0;
    if (s[i] == '\\' && i + 1 < s.size() && (s[i + 1] == '(' || s[i + 1] == '[')) {
      close = s[i + 1] == '(' ? "\\)" : "\\]";
      open_size = 2;
    } else if (s[i] == '\\') {
      i += 2;
      continue;
    } else if (s[i] == '$') {
      bool display = i + 1 < s.size() && s[i + 1] == '$';
      close = display ? "$$" : "$";
      open_size = display ? 2 : 1;
    } else {
      ++i;
      continue;
    }
    size_t inner = i + open_size;
    size_t at = inner;
    while ((at = s.find(close, at)) != std::string_view::npos && at > 0 && s[at - 1] == '\\' && close == "$")
      ++at;
    if (at == std::string_view::npos) break;  // unclosed: nothing more to find
    if (!trim(s.substr(inner, at - inner)).empty())
      out.push_back({i, at + close.size(), trim(s.substr(inner, at - inner))});
    i = at + close.size();
  }
  return out;
}

// Numbers as math-verify finds them in plain text: -12, 3.5, .5, 1,234,567
// (thousands groups), with a trailing % kept. Only at the start, after a space,
// '=' or a currency sign, so that "x2" or "<<3*4=12>>12" parts are not numbers
// of their own except where math-verify also takes them.
std::vector<Span> number_spans(std::string_view s) {
  std::vector<Span> out;
  for (size_t i = 0; i < s.size(); ++i) {
    bool starts = is_digit(s[i]) || ((s[i] == '-' || s[i] == '.') && i + 1 < s.size() && is_digit(s[i + 1]));
    if (!starts || (i > 0 && (is_digit(s[i - 1]) || s[i - 1] == '.' || s[i - 1] == '-'))) continue;
    char before = i > 0 ? s[i - 1] : ' ';
    if (!(is_space(before) || before == '=' || before == '$' || before == '*' || before == '(')) continue;
    size_t j = i + (s[i] == '-' ? 1 : 0);
    while (j < s.size() && is_digit(s[j])) ++j;
    // thousands groups: ,ddd not followed by another digit
    while (j + 3 < s.size() && s[j] == ',' && is_digit(s[j + 1]) && is_digit(s[j + 2]) &&
           is_digit(s[j + 3]) && !(j + 4 < s.size() && is_digit(s[j + 4])))
      j += 4;
    if (j + 1 < s.size() && s[j] == '.' && is_digit(s[j + 1])) {
      ++j;
      while (j < s.size() && is_digit(s[j])) ++j;
    }
    size_t end = j;
    if (end < s.size() && s[end] == '%') ++end;
    out.push_back({i, end, s.substr(i, end - i)});
    i = end - 1;
  }
  return out;
}

// "x = 2 + 3 = 5" keeps "5"; "a = 1, b = 2", "x = 3" and "x = 1 \text{ or } x = 2"
// (several answers joined by words) stay whole.
std::string last_side(std::string_view answer) {
  for (std::string_view keeps_whole : {",", ";", "\\text", " or ", " and "})
    if (answer.find(keeps_whole) != std::string_view::npos) return std::string(answer);
  if (std::count(answer.begin(), answer.end(), '=') < 2) return std::string(answer);
  return std::string(trim(answer.substr(answer.rfind('=') + 1)));
}

bool joins_answers(std::string_view between) {
  std::string_view t = trim(between);
  return t == "," || t == "and" || t == "or" || t == ", and" || t == ", or" || t == ",and" || t == ",or";
}

// The LaTeX expression at spans[k], with the ones joined to it before it.
std::string joined_latex(std::string_view s, const std::vector<Span>& spans, size_t k) {
  std::vector<std::string> parts{last_side(spans[k].text)};
  for (size_t j = k; j > 0 && parts.size() < 6; --j) {
    if (!joins_answers(s.substr(spans[j - 1].end, spans[j].begin - spans[j - 1].end))) break;
    parts.push_back(last_side(spans[j - 1].text));
  }
  std::reverse(parts.begin(), parts.end());
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::optional<ExtractedAnswer> after_answer_word(std::string_view s, const std::vector<Span>& latex,
                                                 const std::vector<Span>& numbers) {
  std::string lowered = lower(s);
  constexpr size_t kReach = 50;  // how far after "answer" its value may start
  for (size_t at = lowered.rfind("answer"); at != std::string::npos;
       at = at == 0 ? std::string::npos : lowered.rfind("answer", at - 1)) {
    size_t from = at + 6;
    const Span* first = nullptr;
    for (const auto* spans : {&latex, &numbers})
      for (const Span& sp : *spans)
        if (sp.begin >= from && sp.begin <= from + kReach && (!first || sp.begin < first->begin)) first = &sp;
    if (!first) continue;
    bool is_latex = !latex.empty() && first >= &latex.front() && first <= &latex.back();
    if (is_latex)
      return ExtractedAnswer{joined_latex(s, latex, static_cast<size_t>(first - latex.data())),
                             AnswerSource::kAnswerLine};
    return ExtractedAnswer{std::string(first->text), AnswerSource::kAnswerLine};
  }
  return std::nullopt;
}

}  // namespace

ExtractedAnswer extract_answer_math_verify_style(std::string_view response) {
  std::vector<std::string> boxes = find_all_boxed(response);
  if (!boxes.empty()) {
    std::string joined;
    for (const std::string& b : boxes) joined += (joined.empty() ? "" : ", ") + last_side(b);
    return {joined, AnswerSource::kBoxed};
  }
  std::vector<Span> latex = latex_spans(response);
  std::vector<Span> numbers = number_spans(response);
  if (auto answer = after_answer_word(response, latex, numbers)) return *answer;
  size_t latex_end = latex.empty() ? 0 : latex.back().end;
  size_t number_end = numbers.empty() ? 0 : numbers.back().end;
  if (!latex.empty() && latex_end >= number_end)
    return {joined_latex(response, latex, latex.size() - 1), AnswerSource::kLastLatex};
  if (!numbers.empty()) return {std::string(numbers.back().text), AnswerSource::kLastNumber};
  return {};
}

}  // namespace rlwb::rewards
