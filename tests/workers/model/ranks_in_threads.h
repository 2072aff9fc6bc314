// on_ranks(): runs a body on several ranks at once, each a thread of this
// process with a real c10d Gloo group of its own (workers/spmd_group.h)
// over a port the system gave it -- how the tensor-parallel and
// 3D-HybridEngine tests run their ranks.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <exception>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "workers/spmd_group.h"

namespace rlwb::workers::testing {

// A loopback port free right now: the system picks it, so test processes
// running side by side (ctest -j, other checkouts) do not meet on one.
inline int free_loopback_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  const bool ok = fd >= 0 && ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) == 0;
  if (fd >= 0) ::close(fd);
  if (!ok) throw std::runtime_error("on_ranks: no free loopback port");
  return ntohs(address.sin_port);
}

inline void on_ranks(int ranks, const std::function<void(int, SpmdGroup&)>& body) {
  const int port = free_loopback_port();
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
