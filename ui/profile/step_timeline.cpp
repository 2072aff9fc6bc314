#include "ui/profile/step_timeline.h"

#include <algorithm>
#include <limits>
#include <map>

namespace rlwb::ui {

StepTimelineLayout layout_step_timeline(const core::profile::StepTiming& step) {
  StepTimelineLayout out;
  out.step = step.step;
  out.critical_path = step.critical_path;
  if (step.nodes.empty()) return out;
  double t0 = std::numeric_limits<double>::infinity(), t1 = -t0;
  for (const auto& n : step.nodes) t0 = std::min(t0, n.start), t1 = std::max(t1, n.end);
  out.length_s = std::max(0.0, t1 - t0);

  std::map<std::string, std::vector<Interval>> busy;
  for (const auto& n : step.nodes) {
    NodeLane lane{n.node,     n.call,       n.kind,      n.pool, n.start - t0,
                  n.end - t0, n.dispatch_s, n.collect_s, false,  {}};
    lane.critical =
        std::find(step.critical_path.begin(), step.critical_path.end(), n.node) != step.critical_path.end();
    const bool local = n.kind != "worker";
    for (const auto& r : n.ranks) {
      RankBar bar;
      bar.rank = r.rank;
      bar.rows = r.rows;
      bar.start = lane.start;
      // A local node's only "rank" is the controller computing it.
      bar.end = local ? lane.end : std::min(lane.end, lane.start + r.reply_s);
      bar.end = std::max(bar.end, bar.start);
      bar.compute_start = local ? bar.start : std::min(bar.end, bar.start + n.dispatch_s);
      bar.compute_end = std::min(bar.end, bar.compute_start + r.compute_s);
      lane.ranks.push_back(bar);
    }
    std::sort(lane.ranks.begin(), lane.ranks.end(), [](auto& a, auto& b) { return a.rank < b.rank; });
    if (n.kind == "worker" && !n.pool.empty()) busy[n.pool].push_back({lane.start, lane.end});
    out.lanes.push_back(std::move(lane));
  }
  std::stable_sort(out.lanes.begin(), out.lanes.end(),
                   [](const NodeLane& a, const NodeLane& b) { return a.start < b.start; });
  for (auto& [pool, spans] : busy) {
    PoolActivity activity{pool, core::profile::merged_intervals(spans), {}, 0};
    double at = 0;
    for (const Interval& b : activity.busy) {
      if (b.first > at) activity.idle.push_back({at, b.first});
      at = std::max(at, b.second);
    }
    if (at < out.length_s) activity.idle.push_back({at, out.length_s});
    for (const Interval& i : activity.idle) activity.idle_s += i.second - i.first;
    out.pools.push_back(std::move(activity));
  }
  return out;
}

}  // namespace rlwb::ui
