// A range of steps as users write it -- "10-20", "15", "10-" -- for
// profile.steps in a graph file and --steps on the profile commands.
// Header-only, so core/config checks profile.steps without linking the
// profile library.
#pragma once

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace rlwb::core::profile {

struct StepRange {
  int64_t first = 1, last = 0;  // last 0: to the end
  bool contains(int64_t step) const { return step >= first && (last == 0 || step <= last); }
};

namespace step_range_detail {
inline bool parse_step(std::string_view text, int64_t& value) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  return ec == std::errc() && end == text.data() + text.size() && value >= 1;
}
}  // namespace step_range_detail

// Throws std::invalid_argument saying the accepted forms.
inline StepRange parse_step_range(const std::string& text) {
  using step_range_detail::parse_step;
  const std::string forms =
      "write A-B (steps A to B), A- (from A to the end) or A (one step), with A, B >= 1";
  StepRange range;
  const auto dash = text.find('-');
  const std::string_view s(text);
  if (dash == std::string::npos) {
    if (!parse_step(s, range.first)) throw std::invalid_argument("bad step range '" + text + "': " + forms);
    range.last = range.first;
    return range;
  }
  if (!parse_step(s.substr(0, dash), range.first) ||
      (dash + 1 < s.size() && !parse_step(s.substr(dash + 1), range.last)))
    throw std::invalid_argument("bad step range '" + text + "': " + forms);
  if (range.last != 0 && range.last < range.first)
    throw std::invalid_argument("bad step range '" + text + "': the last step is before the first");
  return range;
}

}  // namespace rlwb::core::profile
