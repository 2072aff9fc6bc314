// SpmdGroup joins (workers/spmd_group.h): when a member leaves a group the
// moment it has joined -- a worker refusing its layout right after making
// its groups -- the other members still finish joining, and do not fail
// with "Connection closed by peer" inside Gloo's connectFullMesh. And
// how a group tells whether its ranks share a GPU.
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

// How a group chooses NCCL or the host for CUDA tensors (NCCL refuses two
// ranks on one GPU): ranks on one host naming the same device share it;
// each sub-group decides over its own members.
TEST(SpmdDevices, RanksNamingOneDeviceShareAGpuAndOthersDoNot) {
  testing::on_ranks(4, [&](int rank, SpmdGroup& pool) {
    const int devices[] = {0, 0, 1, 2};  // ranks 0 and 1 share GPU 0
    EXPECT_TRUE(pool.ranks_share_a_gpu(devices[rank]));
    if (rank >= 2) {
      std::unique_ptr<SpmdGroup> apart = pool.subgroup("apart", {2, 3});
      EXPECT_FALSE(apart->ranks_share_a_gpu(rank));
    } else {
      std::unique_ptr<SpmdGroup> together = pool.subgroup("together", {0, 1});
      EXPECT_TRUE(together->ranks_share_a_gpu(0));
    }
  });
}

}  // namespace
}  // namespace rlwb::workers
