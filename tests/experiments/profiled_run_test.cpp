// A real GRPO run with profile.enabled: the tracking DB gets the profile's
// settings, one row per profiled step with every node's per-rank timings and
// the critical path, and each worker's calling-context tree per step window,
// whose paths run from the graph's node ids through the role's methods to
// ATen operators. Without the setting nothing is written.
#include "core/controller/controller.h"
#include "core/profile/profile_export.h"
#include "core/profile/profile_store.h"
#include "core/tracking/tracking.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

using namespace rlwb::core;
using profile::FrameKind;

namespace {

struct ProfiledRun {
  int64_t run = 0;
  std::string db;
};

ProfiledRun run_grpo(std::vector<std::string> overrides) {
  auto tmp = std::filesystem::temp_directory_path();
  ProfiledRun r;
  r.db = (tmp / (rlwb::testing::unique_name("rlwb-profiled") + ".db")).string();
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = tmp / rlwb::testing::unique_name("rlwb-profiled-logs");
  o.checkpoint_dir = tmp / rlwb::testing::unique_name("rlwb-profiled-ckpt");
  for (const char* o : {"trainer.steps=3", "trainer.warm_start.steps=1", "trainer.eval.batch_size=16",
                        "trainer.save=[]", "task.batch_size=8", "models.actor.config.ppo.mini_batch_size=64"})
    overrides.insert(overrides.begin(), o);
  Experiment exp =
      load_experiment_file(std::string(rlwb::testing::kSourceDir) + "/experiments/grpo.yaml", overrides);
  TrackingWriter tracking(r.db);
  Controller controller(exp, o, &tracking);
  RunResult result = controller.run();
  tracking.flush();
  EXPECT_EQ(result.status, "finished") << result.error;
  r.run = result.run_id;
  return r;
}

TEST(ProfiledRun, StoresStepTimingsAndEveryWorkersContextTreePerWindow) {
  ProfiledRun r =
      run_grpo({"profile.enabled=true", "profile.steps=2-3", "profile.every=1", "profile.window=1"});
  TrackingReader reader(r.db);
  profile::RunProfile p = profile::load_run_profile(reader, r.run);
  EXPECT_EQ(p.meta.first_step, 2);
  EXPECT_EQ(p.meta.last_step, 3);
  EXPECT_EQ(p.meta.models["actor"]["dp"], 2);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].step, 2);
  for (auto& step : p.steps) {
    ASSERT_EQ(step.nodes.size(), 5u);
    const profile::NodeTiming* gen = step.find("gen");
    ASSERT_NE(gen, nullptr);
    EXPECT_EQ(gen->kind, "worker");
    EXPECT_EQ(gen->pool, "train");
    ASSERT_EQ(gen->ranks.size(), 2u);  // dp 2: both ranks, each with its half of the rows
    EXPECT_EQ(gen->ranks[0].rows + gen->ranks[1].rows, 64);
    EXPECT_GT(gen->ranks[0].compute_s, 0);
    EXPECT_GT(gen->dispatch_s, 0);
    EXPECT_LE(gen->slowest_compute(), gen->wall());
    EXPECT_EQ(step.find("reward")->kind, "reward");
    EXPECT_EQ(step.find("adv")->kind, "builtin");
    EXPECT_EQ(step.find("adv")->after, (std::vector<std::string>{"reward", "gen"}));
    // Everything waits for generation and the update waits for everything.
    ASSERT_GE(step.critical_path.size(), 3u);
    EXPECT_EQ(step.critical_path.front(), "gen");
    EXPECT_EQ(step.critical_path.back(), "update");
  }
  // Two windows (steps 2 and 3) x two workers.
  ASSERT_EQ(p.workers.size(), 4u);
  for (auto& w : p.workers) {
    EXPECT_TRUE(w.worker == "train/0" || w.worker == "train/1") << w.worker;
    EXPECT_EQ(w.first_step, w.last_step);
    EXPECT_GT(w.peak_bytes, 0);
  }
  profile::ContextTree tree = p.merged_tree("train/0");
  const profile::Frame* update = tree.root().find(FrameKind::node, "update");
  ASSERT_NE(update, nullptr) << tree.to_json().dump(1).substr(0, 2000);
  const profile::Frame* method = update->find(FrameKind::method, "update");
  ASSERT_NE(method, nullptr);
  EXPECT_EQ(method->metrics.calls, 2);  // one per profiled step
  int64_t ops = 0, op_ns = 0;
  for (auto& c : method->children)
    if (c->kind == FrameKind::op) ops += c->metrics.calls, op_ns += c->metrics.wall_ns;
  EXPECT_GT(ops, 100) << "an update runs forward, backward and the optimizer";
  EXPECT_LE(op_ns, method->metrics.wall_ns);
  EXPECT_GT(op_ns, method->metrics.wall_ns / 4) << "most of an update's time is in operators";
  const profile::Frame* allreduce = method->find(FrameKind::op, "c10d::allreduce");
  ASSERT_NE(allreduce, nullptr) << "the gradient all-reduce of dp 2 is a frame of its own";
  EXPECT_GE(allreduce->metrics.calls, 2);
  ASSERT_NE(tree.root().find(FrameKind::node, "gen"), nullptr);
  EXPECT_NE(tree.root().find(FrameKind::node, "ref"), nullptr);
  // The warm start and evaluation before RL are not in the profile.
  EXPECT_EQ(tree.root().find(FrameKind::node, "sft"), nullptr);
  EXPECT_EQ(tree.root().find(FrameKind::node, "eval_gen"), nullptr);
}

// A pool's `threads` reaches its workers: each computes on that many
// intra-op threads (LibTorch's pool, sized from OMP_NUM_THREADS), as each
// worker's profile window reports, and the profile's settings record it.
TEST(ProfiledRun, APoolsThreadsAreEachWorkersIntraOpThreads) {
  ProfiledRun r = run_grpo({"+pools.train.threads=2", "profile.enabled=true", "profile.steps=2",
                            "profile.every=1", "profile.window=1"});
  TrackingReader reader(r.db);
  profile::RunProfile p = profile::load_run_profile(reader, r.run);
  EXPECT_EQ(p.meta.pools["train"]["threads"], 2);
  ASSERT_EQ(p.workers.size(), 2u);
  for (auto& w : p.workers) EXPECT_EQ(w.intra_op_threads, 2) << w.worker;
}

TEST(ProfiledRun, EveryNthStepIsProfiledFromTheFirst) {
  ProfiledRun r = run_grpo({"profile.enabled=true", "profile.every=2"});
  TrackingReader reader(r.db);
  profile::RunProfile p = profile::load_run_profile(reader, r.run);
  ASSERT_EQ(p.steps.size(), 2u);
  EXPECT_EQ(p.steps[0].step, 1);
  EXPECT_EQ(p.steps[1].step, 3);
  EXPECT_EQ(p.meta.last_step, 3);
  ASSERT_EQ(p.workers.size(), 2u);  // one window: both profiled steps in one tree per worker
  EXPECT_EQ(p.workers[0].first_step, 1);
  EXPECT_EQ(p.workers[0].last_step, 3);
  const profile::Frame* gen = p.workers[0].tree.root().find(FrameKind::node, "gen");
  ASSERT_NE(gen, nullptr);
  EXPECT_EQ(gen->metrics.calls, 2);
}

// torch's profiler as the engine: one Chrome trace per worker and profiled
// step, in which the call's context is the user scope rlwb/<node>/<method>.
TEST(ProfiledRun, KinetoEngineWritesTorchsTraceWithTheCallContext) {
  ProfiledRun r = run_grpo({"profile.enabled=true", "profile.steps=2", "profile.engine=kineto"});
  TrackingReader reader(r.db);
  int traces = 0;
  for (auto& row : reader.profiles(r.run)) {
    if (row.kind != "kineto") continue;
    ++traces;
    auto info = nlohmann::json::parse(row.data);
    EXPECT_EQ(info["first_step"], 2);
    std::ifstream in(info["path"].get<std::string>());
    ASSERT_TRUE(in) << info.dump();
    std::stringstream text;
    text << in.rdbuf();
    EXPECT_EQ(static_cast<int64_t>(text.str().size()), info["bytes"].get<int64_t>());
    auto trace = nlohmann::json::parse(text.str());
    std::set<std::string> names;
    for (auto& e : trace["traceEvents"])
      if (e.contains("name")) names.insert(e["name"].get<std::string>());
    EXPECT_TRUE(names.count("rlwb/update/update")) << "the call context as a user scope";
    EXPECT_TRUE(names.count("aten::mm") || names.count("mkldnn::_linear_pointwise"));
  }
  EXPECT_EQ(traces, 2);  // two workers, one profiled step
  EXPECT_THROW(profile::load_run_profile(reader, r.run, profile::parse_step_range("2")).workers.at(0),
               std::out_of_range);  // no context trees from this engine
}

// profile.trace: every operator call as an event, on the steps' clock, in
// the Chrome export as a process per worker.
TEST(ProfiledRun, TracedOperatorsLineUpWithTheirStepInTheChromeExport) {
  ProfiledRun r = run_grpo({"profile.enabled=true", "profile.steps=2", "profile.trace=true"});
  TrackingReader reader(r.db);
  profile::RunProfile p = profile::load_run_profile(reader, r.run);
  ASSERT_EQ(p.steps.size(), 1u);
  ASSERT_EQ(p.traces.size(), 2u);  // one per worker
  double first = p.steps[0].nodes.front().start, last = p.steps[0].nodes.front().end;
  for (auto& n : p.steps[0].nodes) first = std::min(first, n.start), last = std::max(last, n.end);
  for (auto& t : p.traces) {
    ASSERT_GT(t.events.size(), 100u) << t.worker;
    for (auto& e : t.events) {
      const double at = (e.start_us - p.meta.clock_origin_us) * 1e-6;
      EXPECT_GE(at, first - 1e-3) << e.name;  // within the step, on the controller's clock
      EXPECT_LE(at + e.duration_us * 1e-6, last + 1e-3) << e.name;
    }
  }
  const nlohmann::json trace = profile::chrome_trace(p);
  std::set<std::string> processes;
  int ops = 0;
  for (auto& e : trace["traceEvents"]) {
    if (e["name"] == "process_name") processes.insert(e["args"]["name"].get<std::string>());
    if (e.value("cat", "") == "op") ++ops;
  }
  EXPECT_TRUE(processes.count("worker train/0 operators")) << trace.dump().substr(0, 500);
  EXPECT_GT(ops, 200);
}

TEST(ProfiledRun, OffByDefaultWritesNoProfile) {
  ProfiledRun r = run_grpo({});
  TrackingReader reader(r.db);
  EXPECT_TRUE(reader.profiles(r.run).empty());
  EXPECT_THROW(profile::load_run_profile(reader, r.run), profile::ProfileError);
}

}  // namespace
