// The service end to end: rlwb-sandbox serve, the client, bad requests, a
// client that vanishes mid-request, and clean shutdown.
#include <gmock/gmock.h>

#include <zmq.hpp>

#include "sandbox/protocol.h"
#include "tests/sandbox/service_process.h"

namespace rlwb::sandbox::testing {
namespace {

using ::testing::HasSubstr;

// One raw request over a fresh DEALER; returns the reply's frame 0.
nlohmann::json raw_request(const std::string& endpoint, const std::vector<std::string>& frames) {
  zmq::context_t ctx;
  zmq::socket_t s(ctx, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.connect(endpoint);
  for (size_t i = 0; i < frames.size(); ++i)
    s.send(zmq::buffer(frames[i]), i + 1 < frames.size() ? zmq::send_flags::sndmore : zmq::send_flags::none);
  zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(10000)) == 0) return nullptr;
  zmq::message_t m;
  (void)s.recv(m);
  return nlohmann::json::parse(m.to_string_view());
}

TEST(SandboxServiceTest, RunAndJudgeThroughTheClient) {
  ServiceProcess service(2);
  SandboxClient client(service.endpoint());
  nlohmann::json pong = client.ping();
  EXPECT_EQ(pong["executors"], 2);
  EXPECT_EQ(pong["namespaces"].size(), 7u);
  EXPECT_FALSE(pong["fallbacks"].empty());

  RunRequest run;
  run.program = "import sys\nsys.stdout.buffer.write(b'\\xff\\x00ok')\nsys.exit(4)\n";
  Verdict v = client.run(run);
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_EQ(v.exit_code, 4);
  EXPECT_EQ(v.stdout_data, std::string("\xff\0ok", 4)) << "raw bytes survive the wire";

  JudgeRequest judge{
      Language::cpp,
      "#include <iostream>\nint main() { int n; std::cin >> n; std::cout << n * n << '\\n'; }\n",
      {TestCase::io("3\n", "9\n"), TestCase::io("4\n", "17\n")},
      {}};
  JudgeResult r = client.judge(judge);
  EXPECT_EQ(r.passed, 1);
  EXPECT_DOUBLE_EQ(r.score, 0.5);
  EXPECT_EQ(r.outcome, Outcome::wrong_answer);
  EXPECT_TRUE(r.compile.has_value());

  JudgeRequest binary_io{Language::python3,
                         "import sys\nsys.stdout.buffer.write(sys.stdin.buffer.read()[::-1])\n",
                         {TestCase::io(std::string("\x01\xfe\x00", 3), std::string("\x00\xfe\x01", 3))},
                         {}};
  binary_io.options.comparison = Comparison::exact;
  EXPECT_EQ(client.judge(binary_io).outcome, Outcome::ok) << "non-UTF-8 test data travels in frames";
  EXPECT_EQ(service.stop(), 0) << service.log();
}

TEST(SandboxServiceTest, BadRequestsGetClearErrors) {
  ServiceProcess service(1);
  struct Case {
    std::vector<std::string> frames;
    const char* error;
  } cases[] = {
      {{"not json"}, "not a JSON object"},
      {{R"J({"id": "a", "kind": "fly"})J"}, "unknown request kind 'fly'"},
      {{R"J({"id": "b", "kind": "run", "program": "print(1)"})J"}, "missing 'lang'"},
      {{R"J({"id": "c", "kind": "run", "lang": "cobol", "program": "x"})J"}, "unknown language 'cobol'"},
      {{R"J({"id": "d", "kind": "run", "lang": "python3", "program": "x", "limits": {"wall_ms": -1}})J"},
       "limits.wall_ms"},
      {{R"J({"id": "e", "kind": "run", "lang": "python3", "program": "x", "limits": {"wall": 1}})J"},
       "unknown key 'wall'"},
      {{R"J({"id": "f", "kind": "judge", "lang": "python3", "program": "x", "tests": []})J"},
       "no test cases"},
      {{R"J({"id": "g", "kind": "run", "lang": "python3", "program": {"frame": 3}})J"}, "refers to frame 3"},
      {{R"J({"id": "h", "kind": "judge", "lang": "c", "program": "x", "tests": [{"stdin": "1"}]})J"},
       "missing 'expected'"},
      {{R"J({"id": "i", "kind": "run", "lang": "bash"})J"}, "missing 'program'"},
  };
  for (const Case& c : cases) {
    nlohmann::json reply = raw_request(service.endpoint(), c.frames);
    ASSERT_TRUE(reply.is_object()) << "no reply to " << c.frames[0];
    EXPECT_FALSE(reply.value("ok", true)) << c.frames[0];
    EXPECT_THAT(reply.value("error", ""), HasSubstr(c.error)) << c.frames[0];
  }
  nlohmann::json with_frames =
      raw_request(service.endpoint(),
                  {R"J({"id": 7, "kind": "run", "lang": "bash", "program": {"frame": 1}})J", "echo framed"});
  EXPECT_EQ(with_frames["id"], 7);
  EXPECT_TRUE(with_frames.value("ok", false)) << with_frames.dump();
  EXPECT_EQ(with_frames["verdict"]["verdict"], "ok");
}

TEST(SandboxServiceTest, ClientThatDisconnectsMidRequestDoesNotWedgeTheExecutor) {
  ServiceProcess service(1);
  {
    zmq::context_t ctx;
    zmq::socket_t s(ctx, zmq::socket_type::dealer);
    s.set(zmq::sockopt::linger, 0);
    s.connect(service.endpoint());
    for (int i = 0; i < 3; ++i)
      s.send(zmq::str_buffer(
          R"J({"id": "gone", "kind": "run", "lang": "python3", "program": "import time\ntime.sleep(30)",
                                 "limits": {"wall_ms": 700}})J"));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }  // the client vanishes with its requests running and queued
  SandboxClient client(service.endpoint(), ClientOptions{std::chrono::seconds(15)});
  RunRequest r;
  r.program = "print('still serving')";
  auto t0 = std::chrono::steady_clock::now();
  Verdict v = client.run(r);
  EXPECT_EQ(v.outcome, Outcome::ok) << v.detail;
  EXPECT_EQ(v.stdout_data, "still serving\n");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(6));
  nlohmann::json stats = client.stats();
  EXPECT_EQ(stats["queued"], 0);
  EXPECT_GE(stats["dropped_replies"].get<int>(), 1) << "replies to the vanished client are dropped, not kept";
}

TEST(SandboxServiceTest, ClientTimesOutWhenNoServiceAnswers) {
  SandboxClient client("ipc:///tmp/rlwb-sandbox-nobody-" + std::to_string(getpid()) + ".sock",
                       ClientOptions{std::chrono::milliseconds(300)});
  RunRequest r;
  r.program = "print(1)";
  auto t0 = std::chrono::steady_clock::now();
  Verdict v = client.run(r);
  EXPECT_EQ(v.outcome, Outcome::sandbox_error);
  EXPECT_THAT(v.detail, HasSubstr("no reply from the sandbox service"));
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_THROW(client.ping(std::chrono::milliseconds(100)), SandboxError);
}

TEST(SandboxServiceTest, OverloadIsAnsweredNotQueuedForever) {
  ServiceProcess service(1, {"--max-queued", "2"});
  SandboxClient client(service.endpoint());
  std::vector<RunRequest> reqs(8);
  for (auto& r : reqs) {
    r.program = "import time\ntime.sleep(0.2)\nprint('x')";
  }
  auto verdicts = client.run_all(reqs);
  int ok = 0, overloaded = 0;
  for (auto& v : verdicts) {
    if (v.ok()) ++ok;
    if (v.detail.find("overloaded") != std::string::npos) ++overloaded;
  }
  EXPECT_EQ(ok + overloaded, 8);
  EXPECT_GE(overloaded, 1);
  EXPECT_GE(ok, 2);
}

}  // namespace
}  // namespace rlwb::sandbox::testing
