#include "core/profile/context_paths.h"

#include <set>

namespace rlwb::core::profile {

std::vector<ContextPath> context_paths(const ContextTree& tree, const std::string& node) {
  std::vector<ContextPath> paths;
  tree.walk([&](const std::vector<const Frame*>& frames) {
    if (!node.empty() && frames.front()->name != node) return;
    const Frame& leaf = *frames.back();
    paths.push_back(
        {frames, leaf.self_wall_ns(), leaf.metrics.wall_ns, leaf.metrics.calls, leaf.metrics.self_bytes});
  });
  return paths;
}

bool worker_matches(const std::string& worker, const std::string& filter) {
  if (filter.empty() || worker == filter) return true;
  // "main" selects "main/0", "main/1": a prefix only up to a '/'.
  return worker.size() > filter.size() && worker.compare(0, filter.size(), filter) == 0 &&
         worker[filter.size()] == '/';
}

ContextTree filtered_tree(const RunProfile& profile, const std::string& worker) {
  ContextTree merged;
  for (const WorkerWindow& window : profile.workers)
    if (worker_matches(window.worker, worker)) merged.merge(window.tree);
  return merged;
}

int64_t profiled_step_count(const RunProfile& profile) {
  // Windows of different workers cover the same steps: count each step once.
  std::set<int64_t> steps;
  for (const WorkerWindow& window : profile.workers)
    for (int64_t s = window.first_step; s <= window.last_step; ++s) steps.insert(s);
  if (steps.empty())
    for (const StepTiming& step : profile.steps) steps.insert(step.step);
  return static_cast<int64_t>(steps.size());
}

}  // namespace rlwb::core::profile
