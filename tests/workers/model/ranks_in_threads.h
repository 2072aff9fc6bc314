// on_ranks(): runs a body on several ranks at once, each a thread of this
// process with a real c10d Gloo group of its own (workers/spmd_group.h)
// over a port the system gave it -- how the tensor-parallel and
// 3D-HybridEngine tests run their ranks.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "workers/spmd_group.h"

namespace rlwb::workers::testing {

inline void on_ranks(int ranks, const std::function<void(int, SpmdGroup&)>& body) {
  const int port = free_loopback_ports(1).front();
  std::vector<std::thread> threads;
  std::vector<std::string> errors(ranks);
  for (int rank = 0; rank < ranks; ++rank)
    threads.emplace_back([&, rank] {
      try {
        SpmdGroup group(SpmdOptions{"127.0.0.1", port, rank, ranks, std::chrono::milliseconds(30000)});
        body(rank, group);
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int rank = 0; rank < ranks; ++rank) EXPECT_EQ(errors[rank], "") << "rank " << rank;
}

}  // namespace rlwb::workers::testing
