#include "core/planner/set_partitions.h"

#include <gtest/gtest.h>

#include <set>

namespace rlwb::core::planner {
namespace {

TEST(SetPartitions, CountsAreTheBellNumbers) {
  const std::vector<std::size_t> bell = {1, 1, 2, 5, 15, 52};
  for (int n = 0; n <= 5; ++n) EXPECT_EQ(set_partitions(n).size(), bell[n]) << "n = " << n;
}

TEST(SetPartitions, FourModelsGiveFifteenDistinctPlacementsThatEachUseEveryModelOnce) {
  const auto partitions = set_partitions(4);
  ASSERT_EQ(partitions.size(), 15u);
  std::set<SetPartition> distinct(partitions.begin(), partitions.end());
  EXPECT_EQ(distinct.size(), 15u);
  for (const auto& p : partitions) {
    std::multiset<int> seen;
    for (const auto& set : p) {
      EXPECT_FALSE(set.empty());
      seen.insert(set.begin(), set.end());
    }
    EXPECT_EQ(seen, (std::multiset<int>{0, 1, 2, 3}));
  }
  EXPECT_EQ(partitions.front(), (SetPartition{{0, 1, 2, 3}}));  // all colocated first
}

}  // namespace
}  // namespace rlwb::core::planner
