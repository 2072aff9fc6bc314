// What the controller saw of each dataflow node, averaged over a profile's
// steps: wall time, dispatch, compute on the slowest and the mean rank, the
// spread of the ranks' replies, the rest (overhead), and how often the node
// was on the step's critical path. The per-node report table
// (profile_report.h) prints it and the analyzer's timing rules
// (analyzer_timing_rules.cpp) read it, so both speak of the same numbers.
#pragma once

#include "core/profile/run_profile.h"

#include <string>
#include <vector>

namespace rlwb::core::profile {

struct NodeSummary {
  std::string node, call, kind, pool;
  int64_t steps = 0;             // steps in which the node ran
  int ranks = 0;                 // the most ranks seen in one step
  double wall_s = 0;             // means per step in which it ran ...
  double dispatch_s = 0;         //
  double collect_s = 0;          //
  double slowest_compute_s = 0;  //
  double mean_compute_s = 0;     //
  double rank_spread_s = 0;      // the fast ranks waiting for the slowest
  double overhead_s = 0;         // wall less the slowest rank's compute
  // Waiting on the last rank's worker for calls of other nodes on the same
  // pool (a worker runs one call at a time: colocated models take turns).
  double queued_s = 0;
  // overhead less dispatch, collect and that queueing: moving the data both
  // ways (never below 0).
  double transfer_s = 0;
  double critical_share = 0;   // share of all profiled steps with the node on the critical path
  double critical_wall_s = 0;  // the node's wall time summed over those steps, divided by all steps

  // "actor" for "actor.generate": the model (or reward) the node calls.
  std::string callee() const;
};

// One entry per node id, in the order the nodes first ran.
std::vector<NodeSummary> summarize_nodes(const RunProfile& profile);

// The mean step time of the profiled steps (0 without steps).
double mean_step_seconds(const RunProfile& profile);

}  // namespace rlwb::core::profile
