// The analyzer on real profiled runs of RLWB's own experiments: the
// finding a run exhibits is found with an override that the graph file
// accepts, and a colocated model's turn on the workers is not mistaken for
// data transfer. (Every rule also has synthetic tests in
// tests/core/profile/analyzer_test.cpp; bench/analyzer_findings.sh applies
// the changes and measures them.)
#include "core/controller/controller.h"
#include "core/profile/analyzer.h"
#include "core/profile/node_summary.h"
#include "core/profile/profile_store.h"
#include "core/tracking/tracking.h"
#include "core/validate/validator.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "app/catalog.h"
#include "app/registries.h"
#include "tests/test_paths.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <thread>

using namespace rlwb::core;
using ::testing::HasSubstr;

namespace {

std::string experiment_path(const std::string& name) {
  return std::string(rlwb::testing::kSourceDir) + "/experiments/" + name + ".yaml";
}

std::vector<std::string> short_run(std::vector<std::string> extra) {
  std::vector<std::string> o = {"trainer.steps=3", "~trainer.warm_start",  "~trainer.eval",
                                "~trainer.save",   "profile.enabled=true", "profile.every=1"};
  o.insert(o.end(), extra.begin(), extra.end());
  return o;
}

profile::RunProfile profiled(const std::string& experiment, const std::vector<std::string>& overrides) {
  auto tmp = std::filesystem::temp_directory_path();
  const std::string db = (tmp / (rlwb::testing::unique_name("rlwb-analyze") + ".db")).string();
  ControllerOptions o = rlwb::app::controller_options();
  o.worker_binary = rlwb::testing::kWorkerBin;
  o.log_dir = tmp / rlwb::testing::unique_name("rlwb-analyze-logs");
  RunResult result;
  {
    TrackingWriter tracking(db);
    Controller controller(load_experiment_file(experiment_path(experiment), overrides), o, &tracking);
    result = controller.run();
  }
  EXPECT_EQ(result.status, "finished") << result.error;
  TrackingReader reader(db);
  return profile::load_run_profile(reader, result.run_id);
}

const profile::Finding* finding(const std::vector<profile::Finding>& all, const std::string& rule) {
  for (auto& f : all)
    if (f.rule == rule) return &f;
  return nullptr;
}

// The change's overrides (the key=value and ~key words before a newline or a '('), applied to
// the experiment, must give a graph the validator accepts.
void expect_valid_change(const std::string& experiment, const std::vector<std::string>& base,
                         const std::string& change) {
  std::vector<std::string> overrides = base;
  std::stringstream words(change.substr(0, change.find_first_of("\n(")));
  for (std::string w; words >> w;)
    if (w.find('=') != std::string::npos || w.rfind("~", 0) == 0) overrides.push_back(w);
  Experiment exp = load_experiment_file(experiment_path(experiment), overrides);
  for (auto& issue : validate_experiment(exp, rlwb::app::catalog()))
    if (issue.severity == Severity::error) ADD_FAILURE() << change << ": " << issue.to_string();
}

TEST(AnalyzerOnRuns, MoreWorkersThanCoresIsFoundWithALayoutThatValidates) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  if (cores > 4) GTEST_SKIP() << "needs a host of at most 4 cores (this one has " << cores << ")";
  const std::string w = std::to_string(2 * cores);
  const auto overrides =
      short_run({"pools.train.workers=" + w, "models.actor.parallel.dp=" + w, "models.ref.parallel.dp=" + w,
                 "models.actor.config.ppo.mini_batch_size=0"});
  auto findings = profile::analyze(profiled("grpo", overrides));
  const profile::Finding* f = finding(findings, "threads-oversubscribed");
  ASSERT_NE(f, nullptr) << profile::format_findings(findings);
  const std::string c = std::to_string(cores);
  EXPECT_THAT(f->change, HasSubstr("pools.train.workers=" + c + " models.actor.parallel.dp=" + c +
                                   " models.ref.parallel.dp=" + c));
  expect_valid_change("grpo", overrides, f->change.substr(f->change.find("pools.")));
}

TEST(AnalyzerOnRuns, APoolThatIdlesWhileAnotherWorksIsColocatedWithALayoutThatValidates) {
  // The reference model on a pool of its own: it waits through generation and the update.
  const auto overrides =
      short_run({"+pools.refpool={workers: 1}", "models.ref.pool=refpool", "models.ref.parallel.dp=1"});
  auto findings = profile::analyze(profiled("grpo", overrides));
  const profile::Finding* f = finding(findings, "pool-idle");
  ASSERT_NE(f, nullptr) << profile::format_findings(findings);
  EXPECT_THAT(f->title, HasSubstr("pool 'refpool' idles while pool 'train'"));
  EXPECT_THAT(f->change, HasSubstr("models.ref.pool=train models.ref.parallel.dp=2 ~pools.refpool"));
  expect_valid_change("grpo", overrides, f->change);
}

TEST(AnalyzerOnRuns, SmallMicroBatchesWithMemoryToSpareAreFoundWithAnOverrideThatValidates) {
  // The actor's update walks its 128 rows per rank and optimizer step in 8 micro-batches.
  const auto overrides = short_run({"models.actor.config.micro_batch_size=16"});
  const profile::RunProfile p = profiled("grpo", overrides);
  ASSERT_FALSE(p.workers.empty());
  int64_t limit = 0, used = 0;
  std::map<std::string, int64_t> rss;  // worker -> its peak so far
  for (const auto& w : p.workers) {
    EXPECT_GT(w.memory_limit_bytes, 0) << w.worker << ": " << ::testing::PrintToString(w.notes);
    EXPECT_GT(w.rss_peak_bytes, 0) << w.worker << ": " << ::testing::PrintToString(w.notes);
    limit = std::max(limit, w.memory_limit_bytes);
    rss[w.worker] = std::max(rss[w.worker], w.rss_peak_bytes);
  }
  for (auto& [worker, bytes] : rss) used += bytes;
  if (used * 4 >= limit)
    GTEST_SKIP() << "the workers use " << used << " of " << limit << " bytes: no headroom here";
  auto findings = profile::analyze(p);
  const profile::Finding* f = finding(findings, "memory-headroom");
  ASSERT_NE(f, nullptr) << profile::format_findings(findings);
  EXPECT_THAT(f->evidence, HasSubstr("actor: micro_batch_size 16 runs 8 micro-batches per optimizer step"));
  EXPECT_THAT(f->change, HasSubstr("models.actor.config.micro_batch_size=128"));
  expect_valid_change("grpo", overrides, f->change);
}

TEST(AnalyzerOnRuns, AColocatedModelsTurnOnTheWorkersIsQueueingNotTransfer) {
  // PPO: actor and critic share the pool; their updates take turns.
  profile::RunProfile p = profiled("ppo", short_run({}));
  double queued = 0;
  std::vector<std::string> queueing;  // nodes that waited for another node's call on their workers
  for (auto& n : profile::summarize_nodes(p))
    if (n.queued_s > 0) queued += n.queued_s, queueing.push_back(n.node);
  EXPECT_GT(queued, 0) << "some node waits for another's call on the same workers";
  // That wait is not read as moving data. (A node that does not queue may
  // still be flagged: on a loaded host its wall time outgrows its compute
  // with the wait for a core, which the rule cannot tell from transfer.)
  for (auto& f : profile::analyze(p)) {
    if (f.rule != "transfer-overhead") continue;
    for (const auto& node : queueing)
      EXPECT_EQ(f.title.find("node '" + node + "'"), std::string::npos) << profile::format_findings({f});
  }
}

}  // namespace
