// Load: 10,000 requests sent at once by 4 clients are all answered exactly
// once, each with its own output, while the service's memory stays bounded.
#include <gmock/gmock.h>

#include <atomic>
#include <map>
#include <thread>
#include <zmq.hpp>

#include "tests/sandbox/service_process.h"

namespace rlwb::sandbox::testing {
namespace {

constexpr int kClients = 4;
constexpr int kPerClient = 2500;

struct ClientTally {
  int answered = 0, duplicates = 0, wrong = 0, errors = 0, unknown = 0;
  std::string first_problem;
};

// One client: sends all its requests at once (pipelined), then collects
// replies until each has come or the deadline passes, and a little longer
// to catch duplicates.
ClientTally client(const std::string& endpoint, int index, std::chrono::seconds deadline) {
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::sndhwm, 0);
  s.set(zmq::sockopt::rcvhwm, 0);
  s.connect(endpoint);
  for (int i = 0; i < kPerClient; ++i) {
    nlohmann::json req = {{"id", std::to_string(index) + "-" + std::to_string(i)},
                          {"kind", "run"},
                          {"lang", "bash"},
                          {"program", "echo " + std::to_string(index * kPerClient + i)},
                          {"limits", {{"wall_ms", 10000}}}};
    s.send(zmq::buffer(req.dump()));
  }
  ClientTally t;
  std::vector<int> seen(kPerClient, 0);
  auto until = std::chrono::steady_clock::now() + deadline;
  auto linger_until = std::chrono::steady_clock::time_point::max();
  while (std::chrono::steady_clock::now() < std::min(until, linger_until)) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(50));
    zmq::message_t head;
    while (s.recv(head, zmq::recv_flags::dontwait)) {
      std::vector<std::string> frames;
      zmq::message_t more;
      bool has_more = head.more();
      while (has_more && s.recv(more)) {
        frames.push_back(more.to_string());
        has_more = more.more();
      }
      auto j = nlohmann::json::parse(head.to_string_view(), nullptr, false);
      std::string id = j.is_object() ? j.value("id", "") : "";
      auto dash = id.find('-');
      if (dash == std::string::npos || std::stoi(id.substr(0, dash)) != index) {
        ++t.unknown;
        continue;
      }
      int i = std::stoi(id.substr(dash + 1));
      if (seen[i]++ > 0) {
        ++t.duplicates;
        continue;
      }
      ++t.answered;
      std::string expected = std::to_string(index * kPerClient + i) + "\n";
      if (!j.value("ok", false) || j["verdict"]["verdict"] != "ok") {
        ++t.errors;
        if (t.first_problem.empty()) t.first_problem = j.dump();
      } else if (frames.empty() || frames[0] != expected) {
        ++t.wrong;
        if (t.first_problem.empty())
          t.first_problem = id + " got '" + (frames.empty() ? "" : frames[0]) + "'";
      }
    }
    if (t.answered == kPerClient && linger_until == std::chrono::steady_clock::time_point::max())
      linger_until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  }
  return t;
}

TEST(SandboxLoadTest, TenThousandConcurrentRequestsAllAnsweredOnceWithBoundedMemory) {
  ServiceProcess service(default_executor_count());
  const uint64_t received_before = SandboxClient(service.endpoint()).stats()["received"].get<uint64_t>();
  const int64_t rss_before = service.memory_kb("VmRSS");
  auto t0 = std::chrono::steady_clock::now();
  std::vector<ClientTally> tallies(kClients);
  std::vector<std::thread> threads;
  for (int c = 0; c < kClients; ++c)
    threads.emplace_back([&, c] { tallies[c] = client(service.endpoint(), c, std::chrono::seconds(150)); });
  // Sample the service's memory while the load runs.
  int64_t rss_peak = rss_before;
  std::atomic<bool> done{false};
  std::thread sampler([&] {
    while (!done) {
      rss_peak = std::max(rss_peak, service.memory_kb("VmRSS"));
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  for (auto& t : threads) t.join();
  done = true;
  sampler.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t rss_after = service.memory_kb("VmRSS");

  int answered = 0;
  for (int c = 0; c < kClients; ++c) {
    const ClientTally& t = tallies[c];
    EXPECT_EQ(t.answered, kPerClient) << "client " << c << " lost replies";
    EXPECT_EQ(t.duplicates, 0) << "client " << c;
    EXPECT_EQ(t.unknown, 0) << "client " << c << " got another client's reply";
    EXPECT_EQ(t.errors, 0) << "client " << c << ": " << t.first_problem;
    EXPECT_EQ(t.wrong, 0) << "client " << c << ": " << t.first_problem;
    answered += t.answered;
  }
  std::printf(
      "[ load     ] %d requests from %d clients answered in %.1f s (%.0f/s); service RSS %lld KiB "
      "before, "
      "%lld peak, %lld after\n",
      answered, kClients, seconds, answered / seconds, static_cast<long long>(rss_before),
      static_cast<long long>(rss_peak), static_cast<long long>(rss_after));
  EXPECT_LT(rss_peak, rss_before + 200 * 1024) << "service memory grew by more than 200 MiB under load";
  SandboxClient probe(service.endpoint());
  nlohmann::json stats = probe.stats();
  // The requests, plus this stats request itself.
  EXPECT_EQ(stats["received"].get<uint64_t>() - received_before,
            static_cast<uint64_t>(kClients * kPerClient + 1));
  EXPECT_EQ(stats["queued"], 0);
  EXPECT_EQ(stats["dropped_replies"], 0);
  EXPECT_EQ(service.stop(), 0) << service.log();
}

}  // namespace
}  // namespace rlwb::sandbox::testing
