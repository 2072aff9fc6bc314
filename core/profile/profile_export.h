// `rlwb profile export`: a stored profile in the formats other tools read.
//   folded  one line per calling context, "node;method;aten::mm 1234": the
//           frames from the dataflow node down, then the context's self
//           time in microseconds (the workers' trees merged). flamegraph.pl,
//           inferno and speedscope read it.
//   chrome  Chrome trace / Perfetto JSON (the Trace Event Format, ts and dur
//           in microseconds): the step timeline the controller recorded.
//           One process per pool and one for the controller's own nodes;
//           each node a complete ("X") event on a "nodes" lane, each rank of
//           a worker node an event on its "rank R" lane from the node's
//           dispatch to that rank's reply; lanes split where events would
//           overlap, as trace viewers want them nested; the steps and the
//           critical path on lanes of the controller process, and
//           "critical": true in the args of each critical node.
//   pprof   pprof's gzip'd protobuf Profile (core/profile/pprof.proto): one
//           sample per calling context with values [calls, wall
//           nanoseconds of its self time], so pprof's flat view is the self
//           time and its cumulative view the total.
// Built on context_paths.h; no LibTorch.
#pragma once

#include "core/profile/run_profile.h"

#include <nlohmann/json.hpp>

#include <string>

namespace rlwb::core::profile {

// Contexts with no self time are left out: flame graphs draw them from
// their children's lines.
std::string folded_stacks(const RunProfile& profile);

nlohmann::json chrome_trace(const RunProfile& profile);

// The gzip'd bytes of a pprof Profile.
std::string pprof_profile(const RunProfile& profile);

}  // namespace rlwb::core::profile
