// TrackingWriter and TrackingReader in one process: params, batched commits,
// polling by rowid, run status, and every kind of row read back.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <thread>

#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using namespace tracking_test;

constexpr int kNeverFlushMs = 3600 * 1000;  // only explicit flushes commit

TEST(FlattenParams, NestedObjectsAndListsBecomeDottedKeys) {
  const auto config = nlohmann::json::parse(R"({
    "trainer": {"steps": 3, "lr": 0.001, "gpus": [0, 1], "name": "ppo", "resume": false},
    "model": {"path": "Qwen/Qwen2.5-0.5B", "extra": {}, "tags": [], "dropout": null},
    "stages": [{"name": "gen"}, {"name": "train"}]
  })");
  EXPECT_THAT(
      flatten_params(config),
      ElementsAre(Pair("model.dropout", "null"), Pair("model.extra", "{}"),
                  Pair("model.path", "Qwen/Qwen2.5-0.5B"), Pair("model.tags", "[]"),
                  Pair("stages.0.name", "gen"), Pair("stages.1.name", "train"), Pair("trainer.gpus.0", "0"),
                  Pair("trainer.gpus.1", "1"), Pair("trainer.lr", "0.001"), Pair("trainer.name", "ppo"),
                  Pair("trainer.resume", "false"), Pair("trainer.steps", "3")));
}

TEST(FlattenParams, NullGivesNoRowsAndAScalarIsRefused) {
  EXPECT_TRUE(flatten_params(nullptr).empty());
  EXPECT_THROW(flatten_params(42), TrackingError);
}

TEST(FlattenParams, KeysThatCollideOnceJoinedAreRefused) {
  EXPECT_THROW(flatten_params({{"a.b", 1}, {"a", {{"b", 2}}}}), TrackingError);
}

TEST_F(TrackingTest, StartRunStoresTheRunAndItsFlattenedParamsAtOnce) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("ppo-gsm8k", "experiments/ppo.yaml", "trainer:\n  steps: 3\n", "ppo",
                                       42, {{"trainer", {{"steps", 3}, {"gpus", {0, 1}}}}});
  TrackingReader reader(path());  // no flush: start_run committed by itself
  const auto info = reader.run(run);
  ASSERT_TRUE(info);
  EXPECT_EQ(info->name, "ppo-gsm8k");
  EXPECT_EQ(info->experiment_file, "experiments/ppo.yaml");
  EXPECT_EQ(info->experiment_text, "trainer:\n  steps: 3\n");
  EXPECT_EQ(info->algorithm, "ppo");
  EXPECT_EQ(info->status, "running");
  EXPECT_EQ(info->seed, 42);
  EXPECT_EQ(info->pid, getpid());
  EXPECT_FALSE(info->host.empty());
  EXPECT_GT(info->start_time, 1.6e9);
  EXPECT_EQ(info->end_time, 0);
  EXPECT_EQ(info->last_step, -1);
  EXPECT_FALSE(info->last_score);
  EXPECT_EQ(info->from_run, 0);
  EXPECT_THAT(reader.params(run), ElementsAre(Pair("trainer.gpus.0", "0"), Pair("trainer.gpus.1", "1"),
                                              Pair("trainer.steps", "3")));
}

// A relaunched run records the run it came from (rlwb run --from-run).
TEST_F(TrackingTest, ARelaunchedRunRecordsTheRunItCameFrom) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t first = writer.start_run("first", "a.yaml", "", "grpo", 1, nullptr);
  const int64_t again = writer.start_run("again", "reopened/run-1.yaml", "", "grpo", 1, nullptr, first);
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(first)->from_run, 0);
  EXPECT_EQ(reader.run(again)->from_run, first);
  EXPECT_EQ(reader.list_runs().front().from_run, first);  // newest first
}

TEST_F(TrackingTest, QueuedMetricsAreCommittedTogetherOnFlushAndReadBackInOrder) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  TrackingReader reader(path());
  for (int step = 0; step < 1000; ++step) {
    writer.log_metric(run, "actor/pg_loss", step, step * 0.5);
    writer.log_metric(run, "critic/score/mean", step, 1.0 / (step + 1));
  }
  EXPECT_TRUE(reader.metrics(run).empty()) << "nothing is committed before the flush";
  writer.flush();
  const auto points = reader.metrics(run);
  ASSERT_EQ(points.size(), 2000u);
  for (int step = 0; step < 1000; ++step) {
    EXPECT_EQ(points[2 * step].key, "actor/pg_loss");
    EXPECT_EQ(points[2 * step].step, step);
    EXPECT_DOUBLE_EQ(points[2 * step].value, step * 0.5);
    EXPECT_DOUBLE_EQ(points[2 * step + 1].value, 1.0 / (step + 1));
    EXPECT_GT(points[2 * step].wall_time, 1.6e9);
  }
  EXPECT_THAT(reader.metric_keys(run), ElementsAre("actor/pg_loss", "critic/score/mean"));
  EXPECT_EQ(reader.metrics(run, 0, "critic/score/mean").size(), 1000u);
}

TEST_F(TrackingTest, BackgroundThreadCommitsWithinTheFlushInterval) {
  TrackingWriter writer(path(), 50);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_metric(run, "actor/entropy", 0, 1.5);
  writer.log_event(run, "info", "controller", "step 0 done");
  TrackingReader reader(path());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (reader.metrics(run).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(reader.metrics(run).size(), 1u);
  EXPECT_EQ(reader.events(run).size(), 1u);
}

TEST_F(TrackingTest, PollingByRowidReturnsOnlyRowsAddedSinceTheLastPoll) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  const int64_t other = writer.start_run("other", "", "", "ppo", 0, nullptr);
  TrackingReader reader(path());
  for (int step = 0; step < 10; ++step) writer.log_metric(run, "a", step, step);
  writer.log_event(run, "info", "controller", "first");
  writer.flush();
  auto first = reader.metrics(run);
  ASSERT_EQ(first.size(), 10u);
  const int64_t metric_cursor = first.back().rowid;
  const int64_t event_cursor = reader.events(run).back().rowid;

  EXPECT_TRUE(reader.metrics(run, metric_cursor).empty());
  for (int step = 10; step < 15; ++step) {
    writer.log_metric(run, "a", step, step);
    writer.log_metric(run, "b", step, -step);
    writer.log_metric(other, "a", step, 0);
  }
  writer.log_event(run, "warning", "rollout", "second");
  writer.flush();

  const auto fresh = reader.metrics(run, metric_cursor);
  ASSERT_EQ(fresh.size(), 10u);
  for (size_t i = 0; i < fresh.size(); ++i) {
    EXPECT_GT(fresh[i].rowid, i == 0 ? metric_cursor : fresh[i - 1].rowid);
    EXPECT_EQ(fresh[i].step, 10 + static_cast<int64_t>(i) / 2);
  }
  const auto fresh_b = reader.metrics(run, metric_cursor, "b");
  ASSERT_EQ(fresh_b.size(), 5u);
  EXPECT_EQ(fresh_b.front().key, "b");
  const auto fresh_events = reader.events(run, event_cursor);
  ASSERT_EQ(fresh_events.size(), 1u);
  EXPECT_EQ(fresh_events[0].text, "second");
  EXPECT_EQ(fresh_events[0].level, "warning");
  EXPECT_EQ(fresh_events[0].source, "rollout");
}

TEST_F(TrackingTest, LastStepFollowsTheHighestStepLogged) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_metric(run, "a", 7, 1);
  writer.log_metric(run, "b", 3, 1);  // a late metric of an earlier step
  writer.flush();
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->last_step, 7);
  writer.log_metric(run, "a", 2, 1);
  writer.flush();
  EXPECT_EQ(reader.run(run)->last_step, 7);
  writer.log_metric(run, "a", 8, 1);
  writer.flush();
  EXPECT_EQ(reader.run(run)->last_step, 8);
}

// A 60-step run after 1000 warm-start steps is at step 60, not 1000; the
// held-out evaluation before RL (step 0) is no training step either.
TEST_F(TrackingTest, LastStepIsTheTrainingStepNotAWarmStartOrEvaluationStep) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "grpo", 0, nullptr);
  writer.log_metric(run, "warm_start/actor/sft_loss", 1000, 0.1);
  writer.log_metric(run, "val/score/mean", 0, 0.5);
  writer.flush();
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->last_step, -1) << "no training step yet";
  writer.log_metric(run, "critic/score/mean", 60, 0.8);
  writer.log_metric(run, "val/score/mean", 60, 0.9);
  writer.flush();
  EXPECT_EQ(reader.run(run)->last_step, 60);
  EXPECT_EQ(reader.list_runs().front().last_step, 60);
}

TEST_F(TrackingTest, NanAndInfinityMetricsRoundTrip) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_metric(run, "critic/score/mean", 0, std::numeric_limits<double>::quiet_NaN());
  writer.log_metric(run, "actor/grad_norm", 0, std::numeric_limits<double>::infinity());
  writer.flush();
  TrackingReader reader(path());
  const auto points = reader.metrics(run);
  ASSERT_EQ(points.size(), 2u);
  EXPECT_TRUE(std::isnan(points[0].value));
  EXPECT_TRUE(std::isinf(points[1].value));
  ASSERT_TRUE(reader.run(run)->last_score);
  EXPECT_TRUE(std::isnan(*reader.run(run)->last_score)) << "a NaN score is not 'no score'";
}

TEST_F(TrackingTest, EndRunCommitsStatusEndTimeAndTheErrorEventAtOnce) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_metric(run, "a", 0, 1);
  writer.end_run(run, "failed", "worker rank 3 died: CUDA out of memory");
  TrackingReader reader(path());
  const auto info = reader.run(run);
  EXPECT_EQ(info->status, "failed");
  EXPECT_GE(info->end_time, info->start_time);
  EXPECT_EQ(reader.metrics(run).size(), 1u) << "end_run flushes what was queued";
  const auto events = reader.events(run);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].level, "error");
  EXPECT_EQ(events[0].source, "controller");
  EXPECT_EQ(events[0].text, "worker rank 3 died: CUDA out of memory");
}

TEST_F(TrackingTest, BadInputIsRefusedWithTheReason) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  const auto error_of = [](auto call) {
    try {
      call();
    } catch (const TrackingError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  EXPECT_THAT(error_of([&] { writer.end_run(run, "done"); }), HasSubstr("not 'done'"));
  EXPECT_THAT(error_of([&] { writer.end_run(run, "running"); }), HasSubstr("not 'running'"));
  EXPECT_THAT(error_of([&] { writer.log_metric(run + 100, "a", 0, 1); }), HasSubstr("there is no run"));
  EXPECT_THAT(error_of([&] { writer.log_metric(run, "", 0, 1); }), HasSubstr("needs a key"));
  EXPECT_THAT(error_of([&] { writer.log_metric(run, "a", -1, 1); }), HasSubstr(">= 0"));
  EXPECT_THAT(error_of([&] { writer.log_event(run, "fatal", "x", "y"); }),
              HasSubstr("'fatal' is not one of"));
  EXPECT_THAT(error_of([&] { writer.start_run("", "", "", "ppo", 0, nullptr); }), HasSubstr("needs a name"));
  EXPECT_THAT(error_of([&] { TrackingWriter bad(path(), 0); }), HasSubstr("must be positive"));
}

TEST_F(TrackingTest, SamplesArtifactsAndProfilesReadBack) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_sample(run, 4, "What is 2+2?", "4", 1.0, {{"ground_truth", "4"}, {"len", 1}});
  writer.log_sample(run, 4, "Name a prime.", "9", 0.0, nullptr);
  writer.log_profile(run, 4, "actor", "trace", R"({"spans":[]})");
  writer.log_artifact(run, "checkpoint", "runs/1/ckpt/step_4");  // commits everything
  TrackingReader reader(path());
  const auto samples = reader.samples(run);
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[0].step, 4);
  EXPECT_EQ(samples[0].prompt, "What is 2+2?");
  EXPECT_EQ(samples[0].response, "4");
  EXPECT_EQ(samples[0].reward, 1.0);
  EXPECT_EQ(samples[0].details["ground_truth"], "4");
  EXPECT_EQ(samples[1].details, nlohmann::json::object());
  EXPECT_EQ(reader.samples(run, samples[0].rowid).size(), 1u);
  const auto artifacts = reader.artifacts(run);
  ASSERT_EQ(artifacts.size(), 1u);
  EXPECT_EQ(artifacts[0].kind, "checkpoint");
  EXPECT_EQ(artifacts[0].path, "runs/1/ckpt/step_4");
  const auto profiles = reader.profiles(run);
  ASSERT_EQ(profiles.size(), 1u);
  EXPECT_EQ(profiles[0].node, "actor");
  EXPECT_EQ(profiles[0].data, R"({"spans":[]})");
}

TEST_F(TrackingTest, MetricSummariesGiveCountMeanRangeAndTheValueAtTheLastStep) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  writer.log_metric(run, "timing_s/gen", 0, 2.0);
  writer.log_metric(run, "timing_s/gen", 2, 4.0);
  writer.log_metric(run, "timing_s/gen", 1, 3.0);  // logged late: not the last value
  writer.flush();
  TrackingReader reader(path());
  const auto summaries = reader.metric_summaries(run);
  ASSERT_EQ(summaries.size(), 1u);
  EXPECT_EQ(summaries[0].key, "timing_s/gen");
  EXPECT_EQ(summaries[0].count, 3);
  EXPECT_DOUBLE_EQ(summaries[0].mean, 3.0);
  EXPECT_DOUBLE_EQ(summaries[0].min, 2.0);
  EXPECT_DOUBLE_EQ(summaries[0].max, 4.0);
  EXPECT_DOUBLE_EQ(summaries[0].sum, 9.0);
  EXPECT_EQ(summaries[0].last_step, 2);
  EXPECT_DOUBLE_EQ(summaries[0].last_value, 4.0);
}

TEST_F(TrackingTest, ListRunsIsNewestFirstWithTheLastScore) {
  TrackingWriter writer(path(), kNeverFlushMs);
  const int64_t first = writer.start_run("first", "", "", "ppo", 0, nullptr);
  const int64_t second = writer.start_run("second", "", "", "grpo", 0, nullptr);
  writer.log_metric(second, "critic/score/mean", 0, 0.25);
  writer.log_metric(second, "critic/score/mean", 1, 0.5);
  writer.flush();
  TrackingReader reader(path());
  const auto runs = reader.list_runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, second);
  EXPECT_EQ(runs[1].id, first);
  EXPECT_DOUBLE_EQ(runs[0].last_score.value(), 0.5);
  EXPECT_FALSE(runs[1].last_score);
}

TEST_F(TrackingTest, DestroyingTheWriterCommitsWhatIsQueued) {
  int64_t run = 0;
  {
    TrackingWriter writer(path(), kNeverFlushMs);
    run = writer.start_run("r", "", "", "ppo", 0, nullptr);
    for (int step = 0; step < 100; ++step) writer.log_metric(run, "a", step, step);
  }
  TrackingReader reader(path());
  EXPECT_EQ(reader.metrics(run).size(), 100u);
}

TEST_F(TrackingTest, ASecondWriterProcessCanLogToAnExistingRun) {
  int64_t run = 0;
  {
    TrackingWriter writer(path());
    run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  }
  TrackingWriter resumed(path());
  resumed.log_metric(run, "a", 5, 1);
  resumed.end_run(run, "finished");
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->last_step, 5);
  EXPECT_EQ(reader.run(run)->status, "finished");
}

}  // namespace
}  // namespace rlwb::core
