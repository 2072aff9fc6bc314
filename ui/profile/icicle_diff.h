// The Profile screen's diff mode: run A's icicle coloured by how each
// calling context's self time per step changed against run B. The numbers
// are core/profile's diff (profile_diff.h, what `rlwb profile diff B A`
// prints), taken with B as the baseline, so a positive change means A
// spends longer there: red, A slower; blue, A faster; grey, unchanged.
// No ImGui; icicle_view.h turns the shade into a colour.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/profile/profile_diff.h"
#include "core/profile/run_profile.h"

namespace rlwb::ui {

struct PathChange {
  double a_s = 0;          // self seconds per step in run A (the run shown)
  double b_s = 0;          // ... in run B
  bool only_in_a = false;  // B has no such context
  double change() const { return a_s - b_s; }
};

class IcicleDiff {
 public:
  IcicleDiff() = default;
  // Both profiles restricted to the workers `worker` selects (context_paths.h's
  // worker_matches; "" for all), then diffed.
  IcicleDiff(const core::profile::RunProfile& a, const core::profile::RunProfile& b,
             const std::string& worker);

  int64_t run_a() const { return run_a_; }
  int64_t run_b() const { return run_b_; }
  // The change at `path` ("gen/generate/aten::mm"); a path the diff leaves
  // out is unchanged, with `self_per_step_s` (A's own value) on both sides.
  PathChange at(const std::string& path, double self_per_step_s) const;
  int64_t steps_a() const { return steps_a_; }
  size_t only_in_b() const { return only_in_b_; }  // contexts A's icicle cannot show
  double total_a_s() const { return total_a_; }
  double total_b_s() const { return total_b_; }

 private:
  int64_t run_a_ = 0, run_b_ = 0, steps_a_ = 1;
  size_t only_in_b_ = 0;
  double total_a_ = 0, total_b_ = 0;
  std::map<std::string, PathChange> changes_;
};

// How strongly to colour a change, in [-1, 1]: + A slower (red), - A faster
// (blue), 0 unchanged (grey). Relative to the larger of the two values, and
// 0 below kUnchangedShare of it or kUnchangedSeconds, so rounding noise
// stays grey. A context only in A is +1.
double diff_shade(const PathChange& change);
inline constexpr double kUnchangedShare = 0.05;
inline constexpr double kUnchangedSeconds = 1e-6;

// A's profile with only the worker windows `worker` selects ("" keeps all).
core::profile::RunProfile with_workers(const core::profile::RunProfile& profile, const std::string& worker);

}  // namespace rlwb::ui
