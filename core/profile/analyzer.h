// `rlwb analyze RUN`: what to change in a run, read off its stored profile.
// Each rule (docs/profiler.md, "Analyzer rules") looks for one known way of
// losing time -- a pool idle while another works on the critical path, a
// straggler rank, a reward node bounding the step, transfer or dispatch
// overhead, operator hot spots in the calling-context trees, CPU threads
// oversubscribed -- and, where it finds it, says what it saw with the
// profile's numbers, the change that should help (a graph-file override
// such as `pools.main.workers=4`, or a code location), and the seconds per
// step it expects that change to save. The findings come ranked by that
// expected gain. The rules themselves are in analyzer_*_rules.cpp; no
// LibTorch.
#pragma once

#include "core/profile/run_profile.h"

#include <string>
#include <vector>

namespace rlwb::core::profile {

struct Finding {
  std::string rule;       // short slug: "pool-idle", "straggler-rank", ...
  std::string title;      // one line naming the thing found
  std::string evidence;   // what the profile shows, with its numbers (may span lines)
  std::string change;     // a graph-file override or a code location
  double gain_s = 0;      // expected seconds saved per step
  double gain_share = 0;  // gain_s as a share of the mean step
  double score = 0;       // what the ranking sorts by (today: gain_s)
};

// Every rule's findings, the largest expected gain first.
std::vector<Finding> analyze(const RunProfile& profile);

// Numbered findings with their evidence and change, or a line saying the
// rules found nothing.
std::string format_findings(const std::vector<Finding>& findings);

}  // namespace rlwb::core::profile
