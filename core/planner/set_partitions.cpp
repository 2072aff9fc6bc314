#include "core/planner/set_partitions.h"

#include <algorithm>

namespace rlwb::core::planner {
namespace {

// Restricted growth strings: element i joins one of the sets made so far
// or opens the next one.
void extend(int i, int n, std::vector<int>& set_of, int sets, std::vector<SetPartition>& out) {
  if (i == n) {
    SetPartition p(sets);
    for (int k = 0; k < n; ++k) p[set_of[k]].push_back(k);
    out.push_back(std::move(p));
    return;
  }
  for (int s = 0; s <= sets && s < n; ++s) {
    set_of[i] = s;
    extend(i + 1, n, set_of, std::max(sets, s + 1), out);
  }
}

}  // namespace

std::vector<SetPartition> set_partitions(int n) {
  std::vector<SetPartition> out;
  std::vector<int> set_of(n, 0);
  extend(0, n, set_of, 0, out);
  return out;
}

}  // namespace rlwb::core::planner
