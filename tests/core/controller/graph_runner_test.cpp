// GraphRunner (core/controller/graph_runner.h) with local nodes only: a
// builtin with no other local node beside it runs on the runner's own
// thread (no thread start and hand-off on the critical path), builtins
// ready together still run on threads of their own and overlap, and a
// failure of a node run on the runner's thread names the node as any
// other does.
#include "core/controller/graph_runner.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace rlwb::core {
namespace {

NodeSpec local_node(const std::string& id, const std::string& method, std::vector<std::string> in,
                    std::vector<std::string> out) {
  NodeSpec n;
  n.id = id;
  n.call = "builtin." + method;
  n.target = "builtin";
  n.method = method;
  n.in = std::move(in);
  n.out = std::move(out);
  return n;
}

struct Fixture {
  std::mutex mu;
  std::map<std::string, std::thread::id> ran_on;  // by the port it wrote
  Builtins builtins;
  NodeTargets targets;
  config::TrainerOptions trainer;

  Fixture() {
    // Writes port `out` = x + 1 after sleeping args.sleep_s; args.fail throws.
    builtins["step"] = {
        [this](const Batch& in, BuiltinContext& ctx) {
          std::this_thread::sleep_for(std::chrono::duration<double>(ctx.args.value("sleep_s", 0.0)));
          if (ctx.args.value("fail", false)) throw std::runtime_error("asked to fail");
          const std::string port = ctx.args.at("port");
          {
            std::lock_guard<std::mutex> lock(mu);
            ran_on[port] = std::this_thread::get_id();
          }
          Batch out;
          out.set_tensor(port, in.tensor(ctx.args.at("from").get<std::string>()) + 1);
          return out;
        },
        {}};
  }

  NodeSpec step(const std::string& id, const std::string& from, const std::string& to, double sleep_s = 0) {
    NodeSpec n = local_node(id, "step", {from}, {to});
    n.args = {{"from", from}, {"port", to}, {"sleep_s", sleep_s}};
    return n;
  }

  StepReport run(const std::vector<NodeSpec>& nodes) {
    GraphRunner runner(targets, builtins, trainer, /*run_id=*/1, std::stop_token{});
    Batch start;
    start.set_tensor("x", torch::zeros({2}));
    return runner.run(nodes, start, /*step=*/1);
  }
};

TEST(GraphRunnerLocalNodes, ABuiltinWithNoOtherLocalNodeBesideItRunsOnTheRunnersThread) {
  Fixture f;
  StepReport report = f.run({f.step("a", "x", "a"), f.step("b", "a", "b")});
  EXPECT_EQ(f.ran_on.at("a"), std::this_thread::get_id());
  EXPECT_EQ(f.ran_on.at("b"), std::this_thread::get_id());
  EXPECT_TRUE(torch::equal(report.batch.tensor("b"), torch::full({2}, 2.0f)));
  EXPECT_TRUE(report.metrics.count("compute_s/b"));
}

TEST(GraphRunnerLocalNodes, BuiltinsReadyTogetherRunOnThreadsOfTheirOwnAtTheSameTime) {
  Fixture f;
  StepReport report = f.run({f.step("left", "x", "l", 0.3), f.step("right", "x", "r", 0.3)});
  EXPECT_NE(f.ran_on.at("l"), std::this_thread::get_id());
  EXPECT_NE(f.ran_on.at("r"), std::this_thread::get_id());
  std::map<std::string, NodeSpan> span;
  for (auto& s : report.spans) span[s.node] = s;
  EXPECT_LT(span["left"].start, span["right"].end);
  EXPECT_LT(span["right"].start, span["left"].end);
}

TEST(GraphRunnerLocalNodes, AFailureOnTheRunnersThreadNamesTheNode) {
  Fixture f;
  NodeSpec bad = f.step("checker", "x", "y");
  bad.args["fail"] = true;
  try {
    f.run({bad});
    ADD_FAILURE() << "expected an error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("node 'checker' (builtin.step) failed: asked to fail"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rlwb::core
