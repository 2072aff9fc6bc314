// Time spans on one clock as (start, end) pairs, for the readers that ask
// when something was busy: the analyzer's idle-pool rule and the GUI's
// step timeline. Header-only.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

namespace rlwb::core::profile {

using Interval = std::pair<double, double>;

// The intervals merged where they touch or overlap, in order.
inline std::vector<Interval> merged_intervals(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}

}  // namespace rlwb::core::profile
