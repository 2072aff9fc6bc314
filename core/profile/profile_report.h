// `rlwb profile show`: a stored profile as text.
//   - The hot contexts: the paths of the workers' merged calling-context
//     trees (node -> method -> operator ...) ranked by self time, with
//     total time, calls, share of all self time, and bytes allocated;
//     filtered by dataflow node and by worker, the first N.
//   - The per-node breakdown of what the controller saw (node_summary.h):
//     mean wall, dispatch, slowest and mean compute, the ranks' spread,
//     the overhead, and the share of steps with the node on the critical path.
// Built on context_paths.h and node_summary.h; no LibTorch.
#pragma once

#include "core/profile/context_paths.h"

#include <cstddef>
#include <string>
#include <vector>

namespace rlwb::core::profile {

struct HotContextOptions {
  std::string node = "";    // only paths under this dataflow node; "" all
  std::string worker = "";  // only this worker ("main/1") or pool ("main"); "" all
  size_t top = 20;          // rows shown; 0: all
};

struct HotContexts {
  ContextTree tree;                // the selected workers' windows, merged; `paths` point into it
  std::vector<ContextPath> paths;  // the hottest first (self time, then total), at most `top`
  int64_t total_self_ns = 0;       // over every selected path, also those past `top`
  size_t path_count = 0;           // selected paths before the cut to `top`
};

// HotContexts is returned whole so that its paths stay valid (they point into its tree).
HotContexts hot_contexts(const RunProfile& profile, const HotContextOptions& options);

// The table of hot_contexts(); a line saying so when nothing matches.
std::string format_hot_contexts(const RunProfile& profile, const HotContextOptions& options);
// The per-node table; a line saying so when the profile has no steps.
std::string format_node_breakdown(const RunProfile& profile);
// What `rlwb profile show` prints: a header (run, steps, workers, what could
// not be measured), the hot contexts and the node breakdown.
std::string format_profile_report(const RunProfile& profile, const HotContextOptions& options);

}  // namespace rlwb::core::profile
