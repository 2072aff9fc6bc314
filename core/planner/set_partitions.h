// Every way to split n models into non-empty device sets: the set
// partitions of {0, ..., n-1}, as HybridFlow's Algorithm 1 enumerates
// placements (models in one set are colocated on the same devices; sets
// run apart). There are Bell(n) of them: 1, 2, 5, 15, 52 for n = 1..5.
#pragma once

#include <vector>

namespace rlwb::core::planner {

// One placement: its sets, each the sorted indices of its models; sets in
// the order of their smallest member.
using SetPartition = std::vector<std::vector<int>>;

// Every partition of {0, ..., n-1}, the all-in-one-set partition first.
// n = 0 gives one empty partition.
std::vector<SetPartition> set_partitions(int n);

}  // namespace rlwb::core::planner
