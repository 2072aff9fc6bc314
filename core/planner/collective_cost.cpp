#include "core/planner/collective_cost.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

namespace rlwb::core::planner {
namespace {

const char* key_of(Collective kind) {
  switch (kind) {
    case Collective::kAllReduce:
      return "all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kBroadcast:
      return "broadcast";
  }
  return "";
}

// (bandwidth factor, latency factor) of the ring formulas for n ranks.
std::pair<double, double> ring_factors(Collective kind, int n) {
  switch (kind) {
    case Collective::kAllReduce:
      return {2.0 * (n - 1) / n, 2.0 * (n - 1)};
    case Collective::kAllGather:
      return {double(n - 1) / n, double(n - 1)};
    case Collective::kBroadcast:
      return {1.0, std::ceil(std::log2(double(n)))};
  }
  return {1, 1};
}

}  // namespace

double collective_seconds(const DeviceProfile& profile, Collective kind, int ranks, double bytes,
                          bool spans_nodes, int contending) {
  if (ranks <= 1) return 0.0;
  const auto [bandwidth_factor, latency_factor] = ring_factors(kind, ranks);
  if (auto it = profile.collectives.find(key_of(kind));
      it != profile.collectives.end() && !it->second.empty()) {
    auto nearest_to = [&](int n) {
      const CollectiveFit* nearest = &it->second.front();
      for (const auto& fit : it->second)
        if (std::abs(fit.ranks - n) < std::abs(nearest->ranks - n)) nearest = &fit;
      return nearest;
    };
    const CollectiveFit* own = nearest_to(ranks);
    double hop_latency = own->latency_s / ring_factors(kind, own->ranks).second;
    if (contending > ranks) {
      const CollectiveFit* crowd = nearest_to(contending);
      hop_latency = std::max(hop_latency, crowd->latency_s / ring_factors(kind, crowd->ranks).second);
    }
    return hop_latency * latency_factor +
           bytes / own->bandwidth * bandwidth_factor / ring_factors(kind, own->ranks).first;
  }
  const LinkSpeed& link = spans_nodes ? profile.inter_node : profile.intra_node;
  return bandwidth_factor * bytes / link.bandwidth + latency_factor * link.latency_s;
}

}  // namespace rlwb::core::planner
