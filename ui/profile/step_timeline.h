// The Profile screen's step timeline, as layout: one step of the
// controller's view (core/profile/run_profile.h's StepTiming) turned into
// lanes -- one per dataflow node, in the order the nodes started, with a
// sub-lane per rank -- and, per pool, the time its workers were busy and
// the gaps between (idle). Times are seconds since the step's first node
// started. Each rank's bar runs from the node's start (its dispatch) to the
// moment that rank's reply was in; the compute part (the method's own time,
// as the worker measured it) is placed after the dispatch and drawn solid,
// the rest is transfer, queueing and waiting. A controller-local node
// (builtin, reward) has one bar, its compute. Nodes on the step's critical
// path are marked. No ImGui; step_timeline_view.cpp draws it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/profile/intervals.h"
#include "core/profile/run_profile.h"

namespace rlwb::ui {

struct RankBar {
  int rank = 0;
  double start = 0, end = 0;                  // dispatch .. reply in
  double compute_start = 0, compute_end = 0;  // the solid part, inside [start, end]
  int64_t rows = 0;
};

struct NodeLane {
  std::string node, call, kind, pool;
  double start = 0, end = 0;
  double dispatch_s = 0, collect_s = 0;
  bool critical = false;
  std::vector<RankBar> ranks;  // by rank
};

using Interval = core::profile::Interval;

struct PoolActivity {
  std::string pool;
  std::vector<Interval> busy;  // union of its worker nodes' spans, in order
  std::vector<Interval> idle;  // the gaps in [0, step length]
  double idle_s = 0;
};

struct StepTimelineLayout {
  int64_t step = 0;
  double length_s = 0;  // first node's start to last node's end
  std::vector<NodeLane> lanes;
  std::vector<PoolActivity> pools;  // by pool name
  std::vector<std::string> critical_path;
};

StepTimelineLayout layout_step_timeline(const core::profile::StepTiming& step);

}  // namespace rlwb::ui
