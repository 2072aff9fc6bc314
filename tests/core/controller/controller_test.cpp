// The controller running small graphs end to end on real worker processes,
// with a real tracking DB: overlap of independent nodes, failures recorded
// with the metrics written before them.
#include "core/controller/controller.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace rlwb::core;

namespace {

std::string temp_db() {
  return (std::filesystem::temp_directory_path() / (rlwb::testing::unique_name("rlwb-ctl") + ".db")).string();
}

Experiment experiment(const std::string& yaml) {
  Experiment exp = load_experiment_text(yaml, "test.yaml");
  auto issues = validate_experiment(exp, rlwb::app::catalog());
  for (auto& i : issues) ADD_FAILURE() << i.to_string();
  return exp;
}

ControllerOptions options() {
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = std::filesystem::temp_directory_path() / rlwb::testing::unique_name("rlwb-ctl-logs");
  return o;
}

const char* kToyGraph = R"(
name: toy
algorithm: demo
pools:
  a: {workers: 1}
  b: {workers: 2}
models:
  sq: {role: demo, pool: a, parallel: {dp: 1}, config: {sleep_ms: 400}}
  ng: {role: demo, pool: b, parallel: {dp: 2}, config: {sleep_ms: 400}}
task: {name: toy_numbers, batch_size: 6}
trainer: {steps: 2}
nodes:
  - {id: square, call: sq.square, in: [x], out: [x_sq]}
  - {id: negate, call: ng.negate, in: [x], out: [x_neg]}
  - {id: total, call: builtin.add, in: [x_sq, x_neg], out: {sum: total}}
)";

// Two demo models on the same two workers, each node 0.3 s; NODES is
// filled in by each test.
const char* kSharedWorkersGraph = R"(
name: chain
algorithm: demo
pools:
  a: {workers: 2}
models:
  sq: {role: demo, pool: a, parallel: {dp: 2}, config: {sleep_ms: 300}}
  ng: {role: demo, pool: a, parallel: {dp: 2}, config: {sleep_ms: 300}}
task: {name: toy_numbers, batch_size: 6}
trainer: {steps: 2}
nodes:
NODES
)";

RunResult run_on_shared_workers(const std::string& nodes) {
  std::string graph = kSharedWorkersGraph;
  graph.replace(graph.find("NODES"), 5, nodes);
  Controller controller(experiment(graph), options(), nullptr);
  return controller.run();
}

std::map<std::string, NodeSpan> spans_of(const StepReport& step) {
  std::map<std::string, NodeSpan> span;
  for (auto& s : step.spans) span[s.node] = s;
  return span;
}

// negate reads only square's output and square keeps one row per row:
// negate goes out right behind square and takes x_sq on each rank.
TEST(Controller, ANodeOnTheSameWorkersGoesRightBehindTheNodeItReadsFrom) {
  RunResult result = run_on_shared_workers(
      "  - {id: square, call: sq.square, in: [x], out: [x_sq]}\n"
      "  - {id: negate, call: ng.negate, in: {x: x_sq}, out: [x_neg]}");
  ASSERT_EQ(result.status, "finished") << result.error;
  for (auto& step : result.steps) {
    auto span = spans_of(step);
    EXPECT_LT(span["negate"].start, span["square"].end) << "negate waited for square's reply";
    auto x = torch::arange(6, torch::kFloat32) + static_cast<float>(step.step * 6);
    EXPECT_TRUE(torch::equal(step.batch.tensor("x_neg"), -(x * x)));
    EXPECT_TRUE(torch::equal(step.batch.tensor("x_sq"), x * x));
  }
}

// negate does not declare keeping rows: square waits for its reply.
TEST(Controller, ANodeBehindOneThatMayChangeItsRowsWaitsForTheReply) {
  RunResult result = run_on_shared_workers(
      "  - {id: negate, call: ng.negate, in: [x], out: [x_neg]}\n"
      "  - {id: square, call: sq.square, in: {x: x_neg}, out: [x_sq]}");
  ASSERT_EQ(result.status, "finished") << result.error;
  for (auto& step : result.steps) {
    auto span = spans_of(step);
    EXPECT_GE(span["square"].start, span["negate"].end);
    auto x = torch::arange(6, torch::kFloat32) + static_cast<float>(step.step * 6);
    EXPECT_TRUE(torch::equal(step.batch.tensor("x_sq"), x * x));
  }
}

TEST(Controller, ThreeNodeGraphRunsIndependentNodesAtTheSameTime) {
  std::string db = temp_db();
  TrackingWriter tracking(db);
  Controller controller(experiment(kToyGraph), options(), &tracking);
  RunResult result = controller.run();
  ASSERT_EQ(result.status, "finished") << result.error;
  ASSERT_EQ(result.steps.size(), 2u);
  for (auto& step : result.steps) {
    std::map<std::string, NodeSpan> span;
    for (auto& s : step.spans) span[s.node] = s;
    ASSERT_EQ(span.size(), 3u);
    // square and negate each take >= 0.4 s; they overlap in time.
    EXPECT_LT(span["square"].start, span["negate"].end);
    EXPECT_LT(span["negate"].start, span["square"].end);
    EXPECT_GE(span["square"].end - span["square"].start, 0.39);
    // total waits for both.
    EXPECT_GE(span["total"].start, std::max(span["square"].end, span["negate"].end) - 1e-6);
    // A serial run would take >= 0.8 s.
    EXPECT_LT(step.seconds, 0.75);
    // Every node reports its compute time the same way: the worker's method
    // (square sleeps 0.4 s) and the builtin's function alike.
    ASSERT_TRUE(step.metrics.count("compute_s/square"));
    EXPECT_GE(step.metrics.at("compute_s/square"), 0.39);
    ASSERT_TRUE(step.metrics.count("compute_s/total")) << "a builtin node reports no compute_s";
    EXPECT_GE(step.metrics.at("compute_s/total"), 0.0);
    EXPECT_LE(step.metrics.at("compute_s/total"), span["total"].end - span["total"].start + 1e-6);
    auto x = torch::arange(6, torch::kFloat32) + static_cast<float>((step.step) * 6);
    EXPECT_TRUE(torch::allclose(step.batch.tensor("total"), x * x - x));
  }
  tracking.flush();
  TrackingReader reader(db);
  auto run = reader.run(result.run_id);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "finished");
  auto timing = reader.metrics(result.run_id, 0, "timing_s/square");
  ASSERT_EQ(timing.size(), 2u);
  EXPECT_GE(timing[0].value, 0.39);
}

TEST(Controller, FailedNodeEndsTheRunAsFailedAndKeepsEarlierMetrics) {
  std::string db = temp_db();
  TrackingWriter tracking(db);
  Controller controller(experiment(R"(
name: failing
pools: {p: {workers: 1}}
models:
  m: {role: demo, pool: p, config: {fail_from_step: 3}}
task: {name: toy_numbers, batch_size: 2}
trainer: {steps: 5}
nodes:
  - {id: square, call: m.square, in: [x], out: [x_sq]}
  - {id: boom, call: m.fail, in: [x_sq], out: []}
)"),
                        options(), &tracking);
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "failed");
  EXPECT_EQ(result.steps.size(), 2u);
  EXPECT_NE(result.error.find("node 'boom'"), std::string::npos) << result.error;
  EXPECT_NE(result.error.find("demo failure requested"), std::string::npos) << result.error;
  tracking.flush();
  TrackingReader reader(db);
  EXPECT_EQ(reader.run(result.run_id)->status, "failed");
  EXPECT_EQ(reader.metrics(result.run_id, 0, "timing_s/square").size(), 2u);
  bool error_event = false;
  for (auto& e : reader.events(result.run_id))
    error_event |= e.level == "error" && e.text.find("demo failure requested") != std::string::npos;
  EXPECT_TRUE(error_event);
}

TEST(Controller, WorkerThatDiesInNativeCodeFailsTheRunPromptly) {
  Controller controller(experiment(R"(
name: crashing
pools: {p: {workers: 1}}
models:
  m: {role: demo, pool: p}
task: {name: toy_numbers, batch_size: 2}
trainer: {steps: 1}
nodes:
  - {id: crash, call: m.crash, in: [x], out: []}
)"),
                        options(), nullptr);
  auto start = std::chrono::steady_clock::now();
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "failed");
  EXPECT_NE(result.error.find("signal 6"), std::string::npos) << result.error;
  // Worker start-up is inside this bound (seconds on a loaded 2-core
  // machine); the death itself is reported within about 2 s.
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), 30.0);
}

// A stop request (Ctrl-C in the CLI) ends the run at the next node
// boundary: 'interrupted', the steps before it kept, in the result and the
// DB, and no step started after it.
TEST(Controller, StopRequestEndsTheRunAsInterruptedAndKeepsTheStepsDone) {
  std::string db = temp_db();
  TrackingWriter tracking(db);
  std::stop_source stop;
  ControllerOptions o = options();
  o.stop = stop.get_token();
  int steps_seen = 0;
  o.hooks.step_done = [&](const StepReport& r, const std::optional<EvalReport>&) {
    ++steps_seen;
    if (r.step == 2) stop.request_stop();
  };
  Controller controller(experiment(R"(
name: stopped
pools: {p: {workers: 1}}
models:
  m: {role: demo, pool: p}
task: {name: toy_numbers, batch_size: 2}
trainer: {steps: 50}
nodes:
  - {id: square, call: m.square, in: [x], out: [x_sq]}
)"),
                        o, &tracking);
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "interrupted") << result.error;
  EXPECT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(steps_seen, 2);
  tracking.flush();
  TrackingReader reader(db);
  EXPECT_EQ(reader.run(result.run_id)->status, "interrupted");
  EXPECT_EQ(reader.metrics(result.run_id, 0, "timing_s/square").size(), 2u);
}

// A stop requested between two steps ends the run before the next step,
// however fast the nodes: a builtin is done before the runner waits on it,
// so a stop seen only by that wait would be missed.
TEST(Controller, AStopBetweenStepsEndsTheRunBeforeTheNextStep) {
  std::stop_source stop;
  ControllerOptions o = options();
  o.stop = stop.get_token();
  o.hooks.step_done = [&](const StepReport& r, const std::optional<EvalReport>&) {
    if (r.step == 2) stop.request_stop();
  };
  Controller controller(experiment(R"(
name: fast
task: {name: toy_numbers, batch_size: 2}
trainer: {steps: 200}
nodes:
  - {id: total, call: builtin.add, in: [x], out: {sum: total}}
)"),
                        o, nullptr);
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "interrupted") << result.error;
  EXPECT_EQ(result.steps.size(), 2u);
}

// A stop requested before the workers have registered ends the start-up.
TEST(Controller, StopRequestedBeforeStartUpEndsTheRunAsInterrupted) {
  std::stop_source stop;
  stop.request_stop();
  ControllerOptions o = options();
  o.stop = stop.get_token();
  Controller controller(experiment(kToyGraph), o, nullptr);
  RunResult result = controller.run();
  EXPECT_EQ(result.status, "interrupted") << result.error;
  EXPECT_TRUE(result.steps.empty());
}

}  // namespace
