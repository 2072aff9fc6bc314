// free_loopback_ports(): the ports that in-process groups (tests, the
// calibration, bench_reshard) give their c10d store. CI once failed when a
// port computed from the process id was already a socket's -- another
// test's Gloo connection -- and the store could not listen (EADDRINUSE).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <torch/torch.h>

#include <set>
#include <thread>
#include <vector>

#include "workers/spmd_group.h"

namespace rlwb::workers {
namespace {

// A socket bound to `port` on 127.0.0.1 (0: any), or -1.
int bind_loopback(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    if (fd >= 0) ::close(fd);
    return -1;
  }
  return fd;
}

int bound_port(int fd) {
  sockaddr_in address{};
  socklen_t length = sizeof address;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  return ntohs(address.sin_port);
}

TEST(FreeLoopbackPorts, AreDistinctBindableAndNeverOneAnotherSocketHolds) {
  // Sockets that hold ports, as other processes' connections do.
  std::vector<int> held;
  std::set<int> held_ports;
  for (int i = 0; i < 32; ++i) {
    held.push_back(bind_loopback(0));
    ASSERT_GE(held.back(), 0);
    ::listen(held.back(), 1);
    held_ports.insert(bound_port(held.back()));
  }
  const std::vector<int> ports = free_loopback_ports(64);
  ASSERT_EQ(ports.size(), 64u);
  EXPECT_EQ(std::set<int>(ports.begin(), ports.end()).size(), ports.size()) << "a port handed out twice";
  for (int port : ports) {
    EXPECT_EQ(held_ports.count(port), 0u) << "port " << port << " is another socket's";
    const int fd = bind_loopback(port);
    EXPECT_GE(fd, 0) << "port " << port << " cannot be bound";
    if (fd >= 0) ::close(fd);
  }
  for (int fd : held) ::close(fd);
}

TEST(FreeLoopbackPorts, TwoRanksFormAGroupOnOne) {
  const int port = free_loopback_ports(1).front();
  std::vector<int64_t> sums(2, 0);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      SpmdGroup group(SpmdOptions{"127.0.0.1", port, rank, 2, std::chrono::milliseconds(30000)});
      torch::Tensor t = torch::full({1}, rank + 1, torch::kInt64);
      group.all_reduce_sum(t);
      sums[rank] = t.item<int64_t>();
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(sums, (std::vector<int64_t>{3, 3}));
}

}  // namespace
}  // namespace rlwb::workers
