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
//
// `contending` > `ranks`: the group's processes share the host's cores with
// others of the same model that compute at once (more processes than the
// host runs at once, profile.concurrent_devices). Each hop then waits for a
// descheduled peer as a group of `contending` processes does: the hop
// latency is that of the measured fit nearest `contending`, if larger. On
// this host a 2-rank all-reduce takes 0.4 ms alone and 1.7 ms a hop-scaled
// share of the 4-process fit; a tp=2 x dp=2 actor on 2 cores measured
// 0.34 s a step against 0.12 s simulated without it.
#pragma once

#include "core/planner/device_profile.h"

namespace rlwb::core::planner {

enum class Collective { kAllReduce, kAllGather, kBroadcast };

double collective_seconds(const DeviceProfile& profile, Collective kind, int ranks, double bytes,
                          bool spans_nodes, int contending = 0);

}  // namespace rlwb::core::planner
