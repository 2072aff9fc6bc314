// SpmdGroup joins (workers/spmd_group.h): when a member leaves a group the
// moment it has joined -- a worker refusing its layout right after making
// its groups -- the other members still finish joining, and do not fail
// with "Connection closed by peer" inside Gloo's connectFullMesh.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/workers/model/ranks_in_threads.h"
#include "workers/spmd_group.h"

namespace rlwb::workers {
namespace {

TEST(SpmdJoin, AMemberLeavingTheMomentItJoinedDoesNotBreakTheOthersJoin) {
  // The race is in timing, so many joins on oversubscribed cores (as under
  // `ctest -j2`, where it was seen): each round makes a sub-group of every
  // rank and drops it at once, and one rank leaves sooner than the others.
  std::atomic<bool> done{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < std::max(2u, std::thread::hardware_concurrency()); ++i)
    spinners.emplace_back([&] {
      while (!done.load(std::memory_order_relaxed)) {
      }
    });
  testing::on_ranks(3, [&](int rank, SpmdGroup& pool) {
    for (int round = 0; round < 60; ++round) {
      std::unique_ptr<SpmdGroup> sub = pool.subgroup("round" + std::to_string(round), {0, 1, 2});
      if (rank == 0) continue;  // leaves at once
      EXPECT_EQ(sub->world(), 3);
    }
  });
  done = true;
  for (auto& t : spinners) t.join();
}

}  // namespace
}  // namespace rlwb::workers
