// The time of one collective over a group of devices, from a device
// profile: its measured fits (profile.collectives) for that group size when
// calibrated, else ring formulas over the link (alpha-beta model; S the
// tensor's bytes, n the ranks, B and a the link's bandwidth and latency):
//   all_reduce   2 (n-1)/n S/B + 2 (n-1) a
//   all_gather   (n-1)/n S/B + (n-1) a       (S: the gathered result)
//   broadcast    S/B + ceil(log2 n) a
// A group within one node uses the intra-node link, one that spans nodes
// the inter-node link (its slowest hop bounds the ring). A measured fit
// for another group size is scaled by the ring factors.
#pragma once

#include "core/planner/device_profile.h"

namespace rlwb::core::planner {

enum class Collective { kAllReduce, kAllGather, kBroadcast };

double collective_seconds(const DeviceProfile& profile, Collective kind, int ranks, double bytes,
                          bool spans_nodes);

}  // namespace rlwb::core::planner
