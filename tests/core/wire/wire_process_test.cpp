// Wire codec between two real processes (fork) over real ZeroMQ sockets,
// laid out as RLWB uses them: the controller binds a ROUTER, the worker
// connects a DEALER. Covers the inline path over tcp:// and ipc://, the
// shared-memory path over ipc:// in both directions, and what happens to
// segments when a peer exits, dies holding a tensor, or never receives.
#include <ATen/Parallel.h>
#include <dirent.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <functional>
#include <iterator>
#include <thread>
#include <zmq_addon.hpp>

#include "core/wire/shm_segment.h"
#include "core/wire/wire.h"

namespace rlwb::core {
namespace {

using Json = nlohmann::json;

constexpr int kTimeoutMs = 30000;  // no test waits forever on a dead peer

// [SECTION] processes and sockets

// Runs `body` in a forked child and returns its pid. The child exits with
// body's return value (0 = its checks passed); `clean_exit` lets it run
// static destructors (as a normal worker exit does), otherwise _exit.
pid_t spawn(const std::function<int()>& body, bool clean_exit = false) {
  std::fflush(nullptr);
  pid_t pid = fork();
  if (pid != 0) return pid;
  at::set_num_threads(1);  // the parent's OpenMP pool did not survive fork
  int rc = 1;
  try {
    rc = body();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "child %d: %s\n", getpid(), e.what());
    rc = 2;
  }
  if (clean_exit) std::exit(rc);
  _exit(rc);
}

int wait_for(pid_t pid) {
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ipc_endpoint(const std::string& tag) {
  return "ipc:///tmp/rlwb-wire-test-" + std::to_string(getpid()) + "-" + tag;
}

zmq::socket_t make_socket(zmq::context_t& ctx, zmq::socket_type type) {
  zmq::socket_t s(ctx, type);
  s.set(zmq::sockopt::rcvtimeo, kTimeoutMs);
  s.set(zmq::sockopt::sndtimeo, kTimeoutMs);
  s.set(zmq::sockopt::linger, 0);
  return s;
}

std::vector<zmq::message_t> receive(zmq::socket_t& s) {
  std::vector<zmq::message_t> frames;
  if (!zmq::recv_multipart(s, std::back_inserter(frames))) {
    throw std::runtime_error("timed out waiting for a message");
  }
  return frames;
}

void send(zmq::socket_t& s, std::vector<zmq::message_t>& frames) {
  if (!zmq::send_multipart(s, frames)) throw std::runtime_error("timed out sending");
}

// Controller side: one ROUTER and the identity of the one worker that said
// hello.
struct Controller {
  zmq::context_t ctx;
  zmq::socket_t router = make_socket(ctx, zmq::socket_type::router);
  zmq::message_t worker;
  std::string endpoint;

  explicit Controller(const std::string& bind_to) {
    router.bind(bind_to);
    endpoint = router.get(zmq::sockopt::last_endpoint);
  }
  ~Controller() {
    if (endpoint.rfind("ipc://", 0) == 0) std::remove(endpoint.substr(6).c_str());
  }
  void await_hello() {
    std::vector<zmq::message_t> frames = receive(router);
    worker = std::move(frames[0]);
    EXPECT_EQ(decode_message(frames, 1).header["kind"], "hello");
  }
  void send_to_worker(const Json& header, const Batch& b, WireOptions options = {}) {
    std::vector<zmq::message_t> frames;
    frames.emplace_back(worker.data(), worker.size());
    encode_message(header, b, frames, options);
    send(router, frames);
  }
  Message receive_from_worker() {
    std::vector<zmq::message_t> frames = receive(router);
    return decode_message(frames, 1);
  }
};

// Worker side: a DEALER that says hello first.
struct Worker {
  zmq::context_t ctx;
  zmq::socket_t dealer = make_socket(ctx, zmq::socket_type::dealer);

  explicit Worker(const std::string& endpoint) {
    dealer.connect(endpoint);
    reply({{"kind", "hello"}}, Batch());
  }
  Message next() {
    std::vector<zmq::message_t> frames = receive(dealer);
    return decode_message(frames);
  }
  void reply(const Json& header, const Batch& b, WireOptions options = {}) {
    std::vector<zmq::message_t> frames;
    encode_message(header, b, frames, options);
    send(dealer, frames);
  }
};

size_t shm_entries_with_prefix(const std::string& prefix) {
  size_t n = 0;
  if (DIR* dir = opendir("/dev/shm")) {
    while (dirent* e = readdir(dir)) {
      if (("/" + std::string(e->d_name)).rfind(prefix, 0) == 0) ++n;
    }
    closedir(dir);
  }
  return n;
}

std::string prefix_of(pid_t pid) { return "/rlwb-" + std::to_string(pid) + "-"; }

// A batch exercising the codec: every wire dtype (rows x 3), a
// non-contiguous column, unicode objects and meta.
Batch varied_batch(int64_t rows) {
  Batch b;
  for (int i = 0; i < static_cast<int>(c10::ScalarType::NumOptions); ++i) {
    auto type = static_cast<c10::ScalarType>(i);
    if (type == c10::ScalarType::Undefined || c10::isQIntType(type)) continue;
    const int64_t item = static_cast<int64_t>(c10::elementSize(type));
    torch::Tensor bytes =
        (torch::arange(rows * 3 * item, torch::kInt64) * 13 + i).remainder(256).to(torch::kUInt8);
    b.set_tensor("t_" + dtype_name(type), bytes.view({rows, 3 * item}).view(type));
  }
  b.set_tensor("transposed", torch::arange(rows * 4, torch::kFloat32).view({4, rows}).t());
  std::vector<Json> text;
  for (int64_t r = 0; r < rows; ++r) text.push_back("行 " + std::to_string(r) + " 🚀 ✓");
  b.set_objects("text", text);
  b.meta() = {{"step", 3}, {"ラベル", "π≈3.14159"}};
  return b;
}

// [SECTION] inline path: the worker echoes every batch it gets

class WireInlineAcrossProcesses : public ::testing::TestWithParam<std::string> {};

TEST_P(WireInlineAcrossProcesses, WorkerEchoesEveryBatchExactly) {
  const std::string bind_to = GetParam() == "tcp" ? "tcp://127.0.0.1:*" : ipc_endpoint("inline");
  Controller controller(bind_to);
  const std::string endpoint = controller.endpoint;
  pid_t child = spawn([&] {
    Worker worker(endpoint);
    for (;;) {
      Message m = worker.next();
      if (m.header["kind"] == "stop") return 0;
      worker.reply({{"kind", "echo"}, {"of", m.header["id"]}}, m.batch);
    }
  });
  controller.await_hello();

  Batch zero_rows;
  zero_rows.set_tensor("wide", torch::zeros({0, 5}, torch::kFloat16));
  zero_rows.set_objects("text", {});
  Batch big;  // 8 MiB, one frame
  big.set_tensor("x", torch::arange(2 * 1024 * 1024, torch::kFloat32).view({1024, 2048}));
  const std::vector<Batch> batches = {varied_batch(3), varied_batch(1), zero_rows, big, Batch()};
  for (size_t i = 0; i < batches.size(); ++i) {
    SCOPED_TRACE(i);
    controller.send_to_worker({{"kind", "request"}, {"id", i}}, batches[i]);
    Message echo = controller.receive_from_worker();
    EXPECT_EQ(echo.header["of"], i);
    EXPECT_TRUE(echo.batch.equals(batches[i]));
  }
  controller.send_to_worker({{"kind", "stop"}}, Batch());
  EXPECT_EQ(wait_for(child), 0);
}

INSTANTIATE_TEST_SUITE_P(Transports, WireInlineAcrossProcesses, ::testing::Values("tcp", "ipc"));

TEST(WireInlineReceive, ReceivedFramesAreWrappedWithoutACopy) {
  Controller controller(ipc_endpoint("zero-copy"));
  const std::string endpoint = controller.endpoint;
  pid_t child = spawn([&] {
    Worker worker(endpoint);
    Batch b;
    b.set_tensor("f32", torch::arange(1 << 20, torch::kFloat32).view({1024, 1024}));
    b.set_tensor("i64", torch::arange(1024 * 64, torch::kInt64).view({1024, 64}));
    b.set_tensor("c128", torch::ones({1024, 64}, torch::kComplexDouble));
    worker.reply({{"kind", "data"}}, b);
    worker.next();  // wait for the stop
    return 0;
  });
  controller.await_hello();
  std::vector<zmq::message_t> frames = receive(controller.router);
  std::vector<const void*> received;
  for (size_t i = 2; i < frames.size(); ++i) received.push_back(frames[i].data());
  Message m = decode_message(frames, 1);
  // Columns are in name order: c128, f32, i64. ZeroMQ's buffers of large
  // frames are 8-byte aligned, so 4- and 8-byte elements are wrapped in
  // place; complex128 (16-byte alignment) may be copied once.
  ASSERT_EQ(received.size(), 3u);
  EXPECT_EQ(m.batch.tensor("f32").data_ptr(), received[1]);
  EXPECT_EQ(m.batch.tensor("i64").data_ptr(), received[2]);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m.batch.tensor("c128").data_ptr()) % 16, 0u);
  EXPECT_EQ(m.batch.tensor("f32")[1023][1023].item<float>(), float((1 << 20) - 1));
  EXPECT_EQ(m.batch.tensor("i64").sum().item<int64_t>(), int64_t{1024 * 64} * (1024 * 64 - 1) / 2);
  EXPECT_TRUE(m.batch.tensor("c128").equal(torch::ones({1024, 64}, torch::kComplexDouble)));
  controller.send_to_worker({{"kind", "stop"}}, Batch());
  EXPECT_EQ(wait_for(child), 0);
}

// [SECTION] shared memory across processes

class WireShmAcrossProcesses : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_ = shm_settings();
    shm_trim();
  }
  void TearDown() override {
    set_shm_settings(saved_);
    shm_trim();
    EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 0u);
  }
  ShmSettings saved_;
  const WireOptions shm_{1 << 20};
};

TEST_F(WireShmAcrossProcesses, RoundTripsBothWaysReuseSegmentsAndLeaveNothingBehind) {
  Controller controller(ipc_endpoint("shm"));
  const std::string endpoint = controller.endpoint;
  const WireOptions shm = shm_;
  pid_t child = spawn(
      [&] {
        Worker worker(endpoint);
        for (;;) {
          Batch out;
          {
            Message m = worker.next();
            if (m.header["kind"] == "stop") break;
            const torch::Tensor& x = m.batch.tensor("x");  // 4 MiB through shm
            out.set_tensor("sum", x.to(torch::kFloat64).sum().expand({x.size(0)}).contiguous());
            out.set_objects("text", m.batch.objects("text"));
            out.set_tensor("doubled", x * 2);  // back through shm
          }                                    // the received tensor is released before the reply
          worker.reply({{"kind", "reply"}}, out, shm);
        }
        return 0;
      },
      /*clean_exit=*/true);
  controller.await_hello();

  const ShmStats before = shm_stats();
  Message last;
  for (int round = 0; round < 3; ++round) {
    SCOPED_TRACE(round);
    Batch b;
    torch::Tensor x = torch::arange(1024 * 1024, torch::kFloat32).view({1024, 1024}) + round;
    b.set_tensor("x", x);
    std::vector<Json> text(1024, Json("ラウンド " + std::to_string(round) + " 🔁"));
    b.set_objects("text", text);
    controller.send_to_worker({{"kind", "request"}}, b, shm);
    last = controller.receive_from_worker();
    EXPECT_DOUBLE_EQ(last.batch.tensor("sum")[0].item<double>(), x.to(torch::kFloat64).sum().item<double>());
    EXPECT_TRUE(last.batch.tensor("doubled").equal(x * 2));
    EXPECT_EQ(last.batch.objects("text")[5], text[5]);
  }
  const ShmStats after = shm_stats();
  EXPECT_EQ(after.sender_created - before.sender_created, 1u);  // one segment, reused
  EXPECT_EQ(after.sender_reused - before.sender_reused, 2u);
  EXPECT_EQ(after.sender_in_flight, 0u);

  controller.send_to_worker({{"kind", "stop"}}, Batch());
  EXPECT_EQ(wait_for(child), 0);
  // The worker's exit unlinked its segments; the tensor it sent is still
  // mapped here and still reads right.
  EXPECT_EQ(shm_entries_with_prefix(prefix_of(child)), 0u);
  EXPECT_EQ(last.batch.tensor("doubled")[1023][1023].item<float>(), 2.0f * (1024 * 1024 - 1 + 2));
}

TEST_F(WireShmAcrossProcesses, SegmentHeldByADeadReceiverIsReclaimed) {
  Controller controller(ipc_endpoint("dead"));
  const std::string endpoint = controller.endpoint;
  pid_t child = spawn([&]() -> int {
    Worker worker(endpoint);
    Message m = worker.next();  // holds the tensor (segment CLAIMED) ...
    worker.reply({{"kind", "got"}}, Batch());
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the reply out
    _exit(0);                                                     // ... and dies without releasing it
  });
  controller.await_hello();
  Batch b;
  b.set_tensor("x", torch::ones({1 << 20}, torch::kFloat32));
  controller.send_to_worker({{"kind", "request"}}, b, shm_);
  controller.receive_from_worker();
  EXPECT_EQ(shm_stats().sender_in_flight, 1u);
  EXPECT_EQ(wait_for(child), 0);
  const size_t reclaimed = shm_stats().sender_reclaimed;
  shm_trim();
  EXPECT_EQ(shm_stats().sender_reclaimed, reclaimed + 1);
  EXPECT_EQ(shm_stats().sender_in_flight, 0u);
}

TEST_F(WireShmAcrossProcesses, MessageTheWorkerNeverReceivesIsReclaimedAfterTheTimeout) {
  ShmSettings s = shm_settings();
  s.unclaimed_timeout = std::chrono::milliseconds(100);
  set_shm_settings(s);
  Controller controller(ipc_endpoint("lost"));
  const std::string endpoint = controller.endpoint;
  pid_t child = spawn([&] {
    Worker worker(endpoint);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the hello out
    return 0;                                                     // exits without reading anything
  });
  controller.await_hello();
  EXPECT_EQ(wait_for(child), 0);
  Batch b;
  b.set_tensor("x", torch::ones({1 << 20}, torch::kFloat32));
  controller.send_to_worker({{"kind", "request"}}, b, shm_);  // dropped by ZeroMQ or unread
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 1u);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  shm_trim();
  EXPECT_EQ(shm_stats().sender_in_flight, 0u);
  EXPECT_EQ(shm_entries_with_prefix(shm_name_prefix()), 0u);
}

TEST_F(WireShmAcrossProcesses, SegmentsOfAKilledSenderAreReaped) {
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = spawn([&] {
    Batch b;
    b.set_tensor("x", torch::ones({1 << 20}, torch::kFloat32));
    std::vector<zmq::message_t> frames;
    encode_message(Json::object(), b, frames, WireOptions{1});
    char one = 1;
    return write(ready[1], &one, 1) == 1 ? 0 : 3;  // then _exit: no cleanup
  });
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1);
  close(ready[0]);
  close(ready[1]);
  // Until it is waited for, the child's pid exists, so no reaper (in this or
  // a concurrently running test process) can remove its segment yet.
  EXPECT_EQ(shm_entries_with_prefix(prefix_of(child)), 1u);
  ASSERT_EQ(wait_for(child), 0);
  shm_reap_orphans();
  EXPECT_EQ(shm_entries_with_prefix(prefix_of(child)), 0u);
}

}  // namespace
}  // namespace rlwb::core
