// `rlwb profile diff A B`: where two runs' time went differently. Each
// calling context (a path node/method/op..., as in context_paths.h) gets its
// self time per profiled step in each run -- the workers' trees merged, and
// divided by each run's own number of profiled steps, so a run profiled for
// 20 steps compares with one profiled for 5 -- and the contexts are ranked
// by how much that changed, largest first. A context in only one run is
// "added" (only in B) or "removed" (only in A). No LibTorch.
#pragma once

#include "core/profile/run_profile.h"

#include <cstddef>
#include <string>
#include <vector>

namespace rlwb::core::profile {

struct ContextChange {
  enum class Presence { both, added, removed };
  std::string path;  // "node/method/aten::mm"
  double a_s = 0;    // self seconds per step in run A
  double b_s = 0;    // ... in run B
  Presence presence = Presence::both;
  double change() const { return b_s - a_s; }
  double ratio() const;  // b / a; +infinity when a is 0
};

struct ProfileDiff {
  int64_t run_a = 0, run_b = 0;
  int64_t steps_a = 0, steps_b = 0;     // profiled steps, what the times are divided by
  double total_a_s = 0, total_b_s = 0;  // all self time per step
  std::vector<ContextChange> changes;   // largest |change| first; unchanged contexts left out
};

ProfileDiff diff(const RunProfile& a, const RunProfile& b);

// A table of the first `top` changes (0: all), with both values and the ratio.
std::string format_profile_diff(const ProfileDiff& diff, size_t top = 20);

}  // namespace rlwb::core::profile
