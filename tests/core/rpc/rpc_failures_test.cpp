// Failure paths of the RPC layer with real processes: remote exceptions,
// a worker killed with SIGKILL mid-call, timeouts, and a rogue ZeroMQ peer
// sending garbage to a worker.
#include "core/wire/wire.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <torch/torch.h>

#include <chrono>

using rlwb::core::Batch;
using rlwb::core::Mesh;
using rlwb::core::RemoteError;
using Clock = std::chrono::steady_clock;

namespace {

Batch numbers(int64_t rows) {
  Batch b;
  b.set_tensor("x", torch::arange(rows, torch::kFloat32));
  return b;
}

TEST(RpcFailures, RemoteExceptionNamesGroupRankHostMethodAndMessage) {
  rlwb::testing::LocalCluster cluster({{"gen", 2}});
  auto model = cluster.demo_model("actor", "gen", Mesh{2, 1, 1});
  try {
    model->call("fail", numbers(2)).get();
    FAIL() << "expected RemoteError";
  } catch (const RemoteError& e) {
    EXPECT_EQ(e.info().group, "gen");
    EXPECT_GE(e.info().rank, 0);
    EXPECT_FALSE(e.info().host.empty());
    EXPECT_EQ(e.info().method, "fail");
    EXPECT_EQ(e.info().model, "actor");
    std::string what = e.what();
    EXPECT_NE(what.find("demo failure requested"), std::string::npos) << what;
    EXPECT_NE(what.find("worker gen/"), std::string::npos) << what;
    EXPECT_NE(what.find("actor.fail"), std::string::npos) << what;
  }
  // The worker keeps serving after a method threw.
  auto ok = model->call("negate", numbers(4)).get();
  EXPECT_EQ(ok.merged.rows(), 4);
}

TEST(RpcFailures, UnknownMethodAndUninitialisedModelAreErrorsNotHangs) {
  rlwb::testing::LocalCluster cluster({{"p", 1}});
  auto reply = cluster.rpc().call("p/0", "ghost", "square", numbers(1));
  try {
    reply.get();
    FAIL() << "expected RemoteError";
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("not initialised"), std::string::npos) << e.what();
  }
}

TEST(RpcFailures, WorkerKilledMidCallIsReportedWithinFiveSeconds) {
  rlwb::core::RpcOptions options;
  options.dead_after = std::chrono::milliseconds(2000);
  rlwb::testing::LocalCluster cluster({{"gen", 2}}, options);
  auto model = cluster.demo_model("actor", "gen", Mesh{2, 1, 1});
  Batch in = numbers(2);
  auto start = Clock::now();
  // `sleep` takes 60 s on every rank; rank 1 dies after 300 ms.
  auto future = cluster.rpc().call("gen/1", "actor", "sleep", in, {{"ms", 60000}});
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(kill(cluster.pid("gen/1"), SIGKILL), 0);
  // No launcher monitor here: detection comes from missing heartbeats alone.
  try {
    future.get();
    FAIL() << "expected RemoteError";
  } catch (const RemoteError& e) {
    double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_LT(seconds, 5.0) << e.what();
    EXPECT_EQ(e.info().rank, 1);
    // Either the heartbeat deadline or the broken connection gives it away.
    std::string what = e.what();
    EXPECT_TRUE(what.find("heartbeat") != std::string::npos || what.find("disconnected") != std::string::npos)
        << what;
  }
  // Later calls to the dead worker fail at once.
  EXPECT_THROW(cluster.rpc().call("gen/1", "actor", "negate", in).get(), RemoteError);
}

// A dead worker's broken connection is often seen (a send fails) before the
// launcher has reaped the process. The call must still fail with the exit
// status the launcher reports a moment later, not with the bare disconnect:
// "killed by signal 6" says what happened, "disconnected" does not.
TEST(RpcFailures, ExitReportedJustAfterTheDisconnectNamesTheExit) {
  rlwb::testing::LocalCluster cluster({{"gen", 1}});
  auto model = cluster.demo_model("actor", "gen", Mesh{1, 1, 1});
  Batch in = numbers(1);
  ASSERT_EQ(kill(cluster.pid("gen/0"), SIGKILL), 0);
  // Let ZeroMQ notice the closed socket, so the call's send fails.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = Clock::now();
  auto future = cluster.rpc().call("gen/0", "actor", "negate", in);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  cluster.rpc().report_worker_death("gen/0", "worker process killed by signal 9 (Killed)");
  try {
    future.get();
    FAIL() << "expected RemoteError";
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("signal 9"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
}

// Without a launcher report the disconnect alone still fails the call, a
// bounded moment later.
TEST(RpcFailures, DisconnectWithoutAnExitReportStillFailsTheCall) {
  rlwb::testing::LocalCluster cluster({{"gen", 1}});
  auto model = cluster.demo_model("actor", "gen", Mesh{1, 1, 1});
  ASSERT_EQ(kill(cluster.pid("gen/0"), SIGKILL), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto start = Clock::now();
  EXPECT_THROW(cluster.rpc().call("gen/0", "actor", "negate", numbers(1)).get(), RemoteError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 5.0);
}

TEST(RpcFailures, GroupCallFailsFastWhenOneRankDies) {
  rlwb::testing::LocalCluster cluster({{"gen", 2}});
  auto model = cluster.demo_model("actor", "gen", Mesh{2, 1, 1});
  auto start = Clock::now();
  auto future = cluster.rpc().call("gen/0", "actor", "sleep", numbers(1), {{"ms", 60000}});
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  kill(cluster.pid("gen/0"), SIGKILL);
  cluster.rpc().report_worker_death("gen/0", "worker process killed by signal 9");
  EXPECT_THROW(future.get(), RemoteError);
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 1.0);
}

TEST(RpcFailures, CallTimeoutIsBounded) {
  rlwb::testing::LocalCluster cluster({{"p", 1}});
  auto model = cluster.demo_model("m", "p", Mesh{1, 1, 1});
  auto start = Clock::now();
  auto future =
      cluster.rpc().call("p/0", "m", "sleep", numbers(1), {{"ms", 5000}}, {}, std::chrono::milliseconds(300));
  try {
    future.get();
    FAIL() << "expected a timeout";
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("timeout"), std::string::npos) << e.what();
  }
  EXPECT_LT(std::chrono::duration<double>(Clock::now() - start).count(), 2.0);
}

TEST(RpcFailures, C10dAllReduceAcrossTwoWorkerProcesses) {
  rlwb::testing::LocalCluster cluster({{"pair", 2}});
  auto model = cluster.demo_model("m", "pair", Mesh{2, 1, 1});
  Batch in;
  in.set_tensor("x", torch::tensor({1.0f, 2.0f, 30.0f, 40.0f}));
  auto result = model->call("global_sum", in).get();
  for (int i = 0; i < 4; ++i) EXPECT_DOUBLE_EQ(result.merged.tensor("total")[i].item<double>(), 73.0);
}

// A raw ZeroMQ ROUTER plays the controller and sends a worker messages that
// are not valid RLWB requests.
class RoguePeer : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = "/tmp/" + rlwb::testing::unique_name("rlwb-rogue") + ".sock";
    router_.set(zmq::sockopt::linger, 0);
    router_.set(zmq::sockopt::rcvtimeo, 5000);  // every wait is bounded
    router_.bind("ipc://" + path_);
    rlwb::core::ProcessSpec spec{"rogue/0",
                                 {rlwb::testing::kWorkerBin, "--controller", "ipc://" + path_, "--group",
                                  "rogue", "--rank", "0", "--world", "1"}};
    launcher_.start(spec);
    auto frames = receive();  // the worker's register message
    ASSERT_GE(frames.size(), 2u);
    identity_ = frames[0].to_string();
    EXPECT_EQ(identity_, "rogue/0");
  }
  void TearDown() override {
    launcher_.stop_all(std::chrono::milliseconds(500));
    std::filesystem::remove(path_);
  }

  std::vector<zmq::message_t> receive() {
    std::vector<zmq::message_t> frames;
    do {
      zmq::message_t part;
      if (!router_.recv(part)) return frames;  // timed out
      frames.push_back(std::move(part));
    } while (frames.back().more());
    return frames;
  }

  // Next reply, skipping heartbeats.
  nlohmann::json next_reply(std::vector<zmq::message_t>* frames_out = nullptr) {
    for (int i = 0; i < 100; ++i) {
      auto frames = receive();
      if (frames.size() < 2) return nullptr;
      auto header = nlohmann::json::parse(frames[1].to_string_view());
      if (header["kind"] == "reply") {
        if (frames_out) *frames_out = std::move(frames);
        return header;
      }
    }
    return nullptr;
  }

  void send(std::vector<std::string> parts) {
    router_.send(zmq::buffer(identity_), zmq::send_flags::sndmore);
    for (size_t i = 0; i < parts.size(); ++i)
      router_.send(zmq::buffer(parts[i]),
                   i + 1 < parts.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  void send_valid_ping(uint64_t id) {
    Batch b;
    b.set_tensor("x", torch::tensor({7.0f, 8.0f}));
    std::vector<zmq::message_t> frames;
    frames.emplace_back(identity_.data(), identity_.size());
    rlwb::core::encode_message({{"kind", "call"}, {"id", id}, {"model", ""}, {"method", "__ping__"}}, b,
                               frames);
    for (size_t i = 0; i < frames.size(); ++i)
      router_.send(frames[i], i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  }

  std::string path_;
  zmq::context_t context_{1};
  zmq::socket_t router_{context_, zmq::socket_type::router};
  rlwb::core::LocalLauncher launcher_{std::filesystem::temp_directory_path() /
                                      rlwb::testing::unique_name("rogue-logs")};
  std::string identity_;
};

TEST_F(RoguePeer, MalformedMessagesGetErrorRepliesAndTheWorkerKeepsServing) {
  const std::vector<std::vector<std::string>> garbage = {
      {"not json at all"},
      {R"({"kind":"call","id":11,"method":"__ping__","columns":[{"name":"x","dtype":"float32","shape":[2],"bytes":8,"transport":"inline"}]})"},  // tensor frame missing
      {R"({"kind":"call","id":12,"method":"__ping__","columns":[{"name":"x","dtype":"float32","shape":[2],"bytes":8,"transport":"inline"}]})",
       "abc"},  // truncated
      {R"({"kind":"call","id":13,"method":"__ping__","columns":[{"name":"x","dtype":"nope","shape":[1],"bytes":4,"transport":"inline"}]})",
       "abcd"},
      {R"({"kind":"call","id":14,"method":"__ping__","columns":[{"name":"x","dtype":"float32","shape":[-1],"bytes":4,"transport":"inline"}]})",
       "abcd"},
      {R"({"kind":"call","id":15,"method":"__ping__","columns":[{"name":"x","dtype":"float32","shape":[1099511627776],"bytes":4,"transport":"inline"}]})",
       "abcd"},
      {R"({"kind":"frobnicate","id":16})"},
  };
  for (auto& message : garbage) {
    send(message);
    auto reply = next_reply();
    ASSERT_FALSE(reply.is_null()) << "no reply to: " << message[0];
    EXPECT_EQ(reply["status"], "error") << message[0];
    EXPECT_NE(reply["error"]["message"].get<std::string>().find("malformed"), std::string::npos)
        << reply.dump();
  }
  send_valid_ping(99);
  std::vector<zmq::message_t> frames;
  auto reply = next_reply(&frames);
  ASSERT_FALSE(reply.is_null());
  EXPECT_EQ(reply["status"], "ok");
  EXPECT_EQ(reply["id"], 99);
  auto decoded = rlwb::core::decode_message(frames, 1);
  EXPECT_TRUE(torch::equal(decoded.batch.tensor("x"), torch::tensor({7.0f, 8.0f})));
}

}  // namespace
