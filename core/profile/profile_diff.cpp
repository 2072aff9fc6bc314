#include "core/profile/profile_diff.h"

#include "core/profile/context_paths.h"
#include "core/profile/profile_units.h"
#include "core/tracking/text_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>

namespace rlwb::core::profile {

double ContextChange::ratio() const { return a_s > 0 ? b_s / a_s : std::numeric_limits<double>::infinity(); }

namespace {

// Self seconds per profiled step of every context of `profile`, by path.
std::map<std::string, double> self_per_step(const RunProfile& profile, int64_t steps, double& total) {
  std::map<std::string, double> by_path;
  const ContextTree tree = profile.merged_tree();
  const double divisor = static_cast<double>(std::max<int64_t>(1, steps));
  total = 0;
  for (const ContextPath& p : context_paths(tree)) {
    const double seconds = static_cast<double>(p.self_ns) * 1e-9 / divisor;
    by_path[p.label()] += seconds;
    total += seconds;
  }
  return by_path;
}

}  // namespace

ProfileDiff diff(const RunProfile& a, const RunProfile& b) {
  ProfileDiff result;
  result.run_a = a.run;
  result.run_b = b.run;
  result.steps_a = profiled_step_count(a);
  result.steps_b = profiled_step_count(b);
  const std::map<std::string, double> in_a = self_per_step(a, result.steps_a, result.total_a_s);
  const std::map<std::string, double> in_b = self_per_step(b, result.steps_b, result.total_b_s);
  for (const auto& [path, seconds] : in_a) {
    auto other = in_b.find(path);
    ContextChange change{.path = path, .a_s = seconds};
    if (other == in_b.end()) {
      change.presence = ContextChange::Presence::removed;
    } else {
      change.b_s = other->second;
    }
    if (change.change() != 0 || change.presence != ContextChange::Presence::both)
      result.changes.push_back(change);
  }
  for (const auto& [path, seconds] : in_b)
    if (!in_a.count(path))
      result.changes.push_back({.path = path, .b_s = seconds, .presence = ContextChange::Presence::added});
  std::stable_sort(result.changes.begin(), result.changes.end(),
                   [](const ContextChange& x, const ContextChange& y) {
                     return std::fabs(x.change()) > std::fabs(y.change());
                   });
  return result;
}

namespace {

std::string signed_seconds(double seconds) { return (seconds > 0 ? "+" : "") + format_seconds(seconds); }

std::string ratio_text(const ContextChange& c) {
  switch (c.presence) {
    case ContextChange::Presence::added:
      return "added";
    case ContextChange::Presence::removed:
      return "removed";
    case ContextChange::Presence::both:
      break;
  }
  if (c.a_s <= 0) return "from 0";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", c.ratio());
  return text;
}

}  // namespace

std::string format_profile_diff(const ProfileDiff& d, size_t top) {
  const std::string a = "run " + std::to_string(d.run_a), b = "run " + std::to_string(d.run_b);
  std::string text = "Self time per step, " + a + " (" + std::to_string(d.steps_a) + " profiled steps, " +
                     format_seconds(d.total_a_s) + " a step) -> " + b + " (" + std::to_string(d.steps_b) +
                     " profiled steps, " + format_seconds(d.total_b_s) + " a step)\n";
  if (d.changes.empty()) return text + "no context changed\n";
  std::vector<std::vector<std::string>> rows = {{"CHANGE", a, b, "RATIO", "CONTEXT (node/method/op...)"}};
  const size_t shown = top == 0 ? d.changes.size() : std::min(top, d.changes.size());
  for (size_t i = 0; i < shown; ++i) {
    const ContextChange& c = d.changes[i];
    rows.push_back({signed_seconds(c.change()),
                    c.presence == ContextChange::Presence::added ? "-" : format_seconds(c.a_s),
                    c.presence == ContextChange::Presence::removed ? "-" : format_seconds(c.b_s),
                    ratio_text(c), c.path});
  }
  text += render_text_table(rows, "  ");
  if (shown < d.changes.size())
    text +=
        "  ... " + std::to_string(d.changes.size() - shown) + " more changed contexts (--top 0 shows all)\n";
  return text;
}

}  // namespace rlwb::core::profile
