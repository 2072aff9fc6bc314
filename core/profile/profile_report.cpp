#include "core/profile/profile_report.h"

#include "core/profile/node_summary.h"
#include "core/profile/profile_units.h"
#include "core/tracking/text_table.h"

#include <algorithm>
#include <set>

namespace rlwb::core::profile {

HotContexts hot_contexts(const RunProfile& profile, const HotContextOptions& options) {
  HotContexts hot;
  hot.tree = filtered_tree(profile, options.worker);
  hot.paths = context_paths(hot.tree, options.node);
  hot.path_count = hot.paths.size();
  for (const ContextPath& p : hot.paths) hot.total_self_ns += p.self_ns;
  // Stable, so that equal times keep the tree's (first-seen) order run after run.
  std::stable_sort(hot.paths.begin(), hot.paths.end(), [](const ContextPath& a, const ContextPath& b) {
    return a.self_ns != b.self_ns ? a.self_ns > b.self_ns : a.total_ns > b.total_ns;
  });
  if (options.top > 0 && hot.paths.size() > options.top) hot.paths.resize(options.top);
  return hot;
}

namespace {

std::string selection(const HotContextOptions& options) {
  std::string text;
  if (!options.node.empty()) text += " node '" + options.node + "'";
  if (!options.worker.empty())
    text += std::string(text.empty() ? "" : ",") + " worker '" + options.worker + "'";
  return text.empty() ? " (every node and worker)" : text;
}

}  // namespace

std::string format_hot_contexts(const RunProfile& profile, const HotContextOptions& options) {
  const HotContexts hot = hot_contexts(profile, options);
  if (hot.paths.empty()) return "no calling contexts recorded for" + selection(options) + "\n";
  const double steps = static_cast<double>(std::max<int64_t>(1, profiled_step_count(profile)));
  std::vector<std::vector<std::string>> rows = {
      {"RANK", "SELF", "SELF/STEP", "TOTAL", "CALLS", "SHARE", "BYTES", "CONTEXT (node/method/op...)"}};
  for (size_t i = 0; i < hot.paths.size(); ++i) {
    const ContextPath& p = hot.paths[i];
    const double share = hot.total_self_ns > 0 ? static_cast<double>(p.self_ns) / hot.total_self_ns : 0;
    rows.push_back({std::to_string(i + 1), format_ns(p.self_ns), format_seconds(p.self_ns * 1e-9 / steps),
                    format_ns(p.total_ns), std::to_string(p.calls), format_percent(share),
                    format_bytes(p.self_bytes), p.label()});
  }
  std::string text = "Hottest contexts by self time" + selection(options) + ": " +
                     std::to_string(hot.paths.size()) + " of " + std::to_string(hot.path_count) + ", " +
                     format_ns(hot.total_self_ns) + " in all\n";
  return text + render_text_table(rows, "  ");
}

std::string format_node_breakdown(const RunProfile& profile) {
  const std::vector<NodeSummary> nodes = summarize_nodes(profile);
  if (nodes.empty()) return "no step timings recorded\n";
  std::vector<std::vector<std::string>> rows = {{"NODE", "KIND", "POOL", "RANKS", "WALL", "DISPATCH",
                                                 "SLOWEST COMPUTE", "MEAN COMPUTE", "RANK SPREAD", "OVERHEAD",
                                                 "CRITICAL"}};
  for (const NodeSummary& n : nodes)
    rows.push_back(
        {n.node, n.kind, n.pool.empty() ? "-" : n.pool, std::to_string(n.ranks), format_seconds(n.wall_s),
         format_seconds(n.dispatch_s), format_seconds(n.slowest_compute_s), format_seconds(n.mean_compute_s),
         format_seconds(n.rank_spread_s), format_seconds(n.overhead_s), format_percent(n.critical_share)});
  return "Nodes, mean per step (" + std::to_string(profile.steps.size()) + " steps, " +
         format_seconds(mean_step_seconds(profile)) +
         " a step; CRITICAL: share of steps on the critical path)\n" + render_text_table(rows, "  ");
}

std::string format_profile_report(const RunProfile& profile, const HotContextOptions& options) {
  std::string text = "Profile of run " + std::to_string(profile.run) + ": steps ";
  if (profile.steps.empty()) {
    text += "none timed";
  } else {
    text += std::to_string(profile.steps.front().step) + "-" + std::to_string(profile.steps.back().step);
  }
  text += ", " + std::to_string(profile.workers.size()) + " worker windows";
  if (profile.meta.host_cores > 0) text += ", " + std::to_string(profile.meta.host_cores) + " host cores";
  text += "\n";
  // What the workers could not measure changes how to read the numbers; say it once per note.
  std::set<std::string> notes;
  for (const WorkerWindow& w : profile.workers)
    for (const std::string& note : w.notes)
      if (notes.insert(note).second) text += "  note (" + w.worker + "): " + note + "\n";
  return text + "\n" + format_hot_contexts(profile, options) + "\n" + format_node_breakdown(profile);
}

}  // namespace rlwb::core::profile
