#include "core/profile/node_summary.h"

#include <algorithm>
#include <map>

namespace rlwb::core::profile {

std::string NodeSummary::callee() const { return call.substr(0, call.find('.')); }

namespace {

// How long `n`'s last reply waited for other nodes' calls on the same
// worker before its own compute began: the overlap of [start, compute
// began] with their compute on that rank.
double queued_on_last_rank(const StepTiming& step, const NodeTiming& n) {
  if (n.kind != "worker" || n.ranks.empty()) return 0;
  const RankTiming& last = *std::max_element(n.ranks.begin(), n.ranks.end(),
                                             [](auto& a, auto& b) { return a.reply_s < b.reply_s; });
  const double wait_from = n.start, wait_to = n.start + last.reply_s - last.compute_s;
  double queued = 0;
  for (const NodeTiming& other : step.nodes) {
    if (&other == &n || other.kind != "worker" || other.pool != n.pool) continue;
    for (const RankTiming& r : other.ranks) {
      if (r.rank != last.rank) continue;
      const double busy_to = other.start + r.reply_s, busy_from = busy_to - r.compute_s;
      queued += std::max(0.0, std::min(wait_to, busy_to) - std::max(wait_from, busy_from));
    }
  }
  return queued;
}

}  // namespace

std::vector<NodeSummary> summarize_nodes(const RunProfile& profile) {
  std::vector<NodeSummary> summaries;
  std::map<std::string, size_t> index;
  for (const StepTiming& step : profile.steps) {
    for (const NodeTiming& n : step.nodes) {
      auto [it, added] = index.try_emplace(n.node, summaries.size());
      if (added) summaries.push_back({.node = n.node, .call = n.call, .kind = n.kind, .pool = n.pool});
      NodeSummary& s = summaries[it->second];
      s.steps += 1;
      s.ranks = std::max(s.ranks, static_cast<int>(n.ranks.size()));
      s.wall_s += n.wall();
      s.dispatch_s += n.dispatch_s;
      s.collect_s += n.collect_s;
      s.slowest_compute_s += n.slowest_compute();
      s.mean_compute_s += n.mean_compute();
      s.rank_spread_s += n.rank_spread();
      s.overhead_s += n.overhead();
      const double queued = queued_on_last_rank(step, n);
      s.queued_s += queued;
      s.transfer_s += std::max(0.0, n.overhead() - n.dispatch_s - n.collect_s - queued);
      const bool critical =
          std::find(step.critical_path.begin(), step.critical_path.end(), n.node) != step.critical_path.end();
      if (critical) {
        s.critical_share += 1;
        s.critical_wall_s += n.wall();
      }
    }
  }
  const double all_steps = static_cast<double>(profile.steps.size());
  for (NodeSummary& s : summaries) {
    const double ran = static_cast<double>(s.steps);
    for (double* mean : {&s.wall_s, &s.dispatch_s, &s.collect_s, &s.slowest_compute_s, &s.mean_compute_s,
                         &s.rank_spread_s, &s.overhead_s, &s.queued_s, &s.transfer_s})
      *mean /= ran;
    s.critical_share /= all_steps;
    s.critical_wall_s /= all_steps;
  }
  return summaries;
}

double mean_step_seconds(const RunProfile& profile) {
  if (profile.steps.empty()) return 0;
  double sum = 0;
  for (const StepTiming& step : profile.steps) sum += step.seconds;
  return sum / static_cast<double>(profile.steps.size());
}

}  // namespace rlwb::core::profile
