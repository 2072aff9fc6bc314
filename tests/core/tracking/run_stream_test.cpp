// RunStream and RunMirror (core/tracking/run_stream.h): a run streamed batch
// by batch from one tracking DB into another ends up row for row the same,
// superseded marks included, and a batch cut off midway is neither lost nor
// written twice.
#include "core/tracking/run_stream.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/tracking/tracking.h"
#include "tests/core/tracking/run_rows.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core::tracking_test {
namespace {

using rlwb::testing::rows_of;

class RunStreamTest : public TrackingTest {
 protected:
  // Streams everything there is now into `mirror`; the number of batches.
  int pump(RunStream& stream, RunMirror& mirror, int max_rows = 2000) {
    int batches = 0;
    while (true) {
      auto lines = stream.next_batch(max_rows);
      if (lines.empty()) return batches;
      for (const auto& line : lines) mirror.apply(line);
      ++batches;
    }
  }

  int64_t start(TrackingWriter& w) {
    return w.start_run("remote-ppo", "ppo.yaml", "trainer: {steps: 3}\n", "ppo", 7,
                       nlohmann::json{{"trainer", {{"steps", 3}}}, {"task", {{"batch_size", 16}}}});
  }

  std::string source() const { return path("source.db"); }
  std::string local() const { return path("local.db"); }
};

TEST_F(RunStreamTest, EveryRowOfAFinishedRunArrivesOnceAndBitForBit) {
  TrackingWriter w(source());
  const int64_t run = start(w);
  for (int64_t step = 1; step <= 3; ++step) {
    w.log_metric(run, "critic/score/mean", step, 0.1 * step + 1e-13);
    w.log_metric(run, "actor/entropy", step, step == 2 ? std::nan("") : 1.0 / 3.0);
    w.log_sample(run, step, "2+2=", "4", step == 3 ? std::nan("") : 1.0, {{"judge", "math"}});
  }
  w.log_event(run, "info", "controller", "step 3 done");
  w.log_artifact(run, "checkpoint", "/runs/1/actor");
  w.log_profile(run, 2, "actor.generate", "timings", R"({"ms": 12.5})");
  w.end_run(run, "finished");

  RunStream stream(source(), run);
  RunMirror mirror(local(), "gpu-box", "/srv/rlwb/runs/rlwb.db", run);
  EXPECT_EQ(pump(stream, mirror), 1);
  EXPECT_TRUE(stream.ended());
  EXPECT_EQ(stream.end_status(), "finished");
  ASSERT_GT(mirror.local_run(), 0);
  EXPECT_EQ(rows_of(local(), mirror.local_run()), rows_of(source(), run));
  EXPECT_EQ(rows_of(local(), mirror.local_run())["metrics"].size(), 6u);

  TrackingReader reader(local());
  auto tags = reader.tags(mirror.local_run());
  EXPECT_NE(
      std::find(tags.begin(), tags.end(), std::pair<std::string, std::string>("remote.host", "gpu-box")),
      tags.end());
  EXPECT_EQ(reader.run(mirror.local_run())->status, "finished");
  EXPECT_EQ(find_mirrored_run(local(), "gpu-box", "/srv/rlwb/runs/rlwb.db", run), mirror.local_run());
  EXPECT_EQ(find_mirrored_run(local(), "other-box", "/srv/rlwb/runs/rlwb.db", run), std::nullopt);
}

TEST_F(RunStreamTest, ALiveRunComesBatchByBatchAndNothingChangedSendsNothing) {
  TrackingWriter w(source());
  const int64_t run = start(w);
  RunStream stream(source(), run);
  RunMirror mirror(local(), "h", "/db", run);
  EXPECT_EQ(pump(stream, mirror), 1);  // the run row and its params
  EXPECT_TRUE(stream.next_batch().empty());
  for (int64_t step = 1; step <= 7; ++step) w.log_metric(run, "loss", step, 1.0 / step);
  w.flush();
  // Three rows a batch: 7 rows take three batches, and the run is not over.
  EXPECT_EQ(pump(stream, mirror, 3), 3);
  EXPECT_FALSE(stream.ended());
  EXPECT_EQ(TrackingReader(local()).run(mirror.local_run())->status, "running");
  w.end_run(run, "failed", "a worker died");
  EXPECT_EQ(pump(stream, mirror, 3), 1);
  EXPECT_TRUE(stream.ended());
  EXPECT_EQ(rows_of(local(), mirror.local_run()), rows_of(source(), run));
  EXPECT_EQ(TrackingReader(local()).run(mirror.local_run())->status, "failed");
}

TEST_F(RunStreamTest, AResumesSupersededMarksLandOnTheMirroredCopiesOfTheRowsTheyMark) {
  int64_t run = 0;
  {
    TrackingWriter w(source());
    run = start(w);
    for (int64_t step = 1; step <= 6; ++step) {
      w.log_metric(run, "critic/score/mean", step, 0.1 * step);
      w.log_sample(run, step, "p", "r", 0.5, nullptr);
    }
    w.end_run(run, "failed", "killed");
  }
  RunStream stream(source(), run);
  RunMirror mirror(local(), "h", "/db", run);
  pump(stream, mirror);
  {
    TrackingWriter w(source());
    w.resume_run(run, 4, "/ckpt/step-000004");
    w.log_metric(run, "critic/score/mean", 5, 0.55);
    w.flush();
  }
  pump(stream, mirror);
  {
    // A second resume before the mirror looks again: both sets of marks.
    TrackingWriter w(source());
    w.log_metric(run, "critic/score/mean", 6, 0.66);
    w.flush();
    w.resume_run(run, 5, "/ckpt/step-000005");
    w.log_metric(run, "critic/score/mean", 6, 0.67);
    w.end_run(run, "finished");
  }
  pump(stream, mirror);
  EXPECT_EQ(rows_of(local(), mirror.local_run()), rows_of(source(), run));
  std::map<int64_t, double> score;
  for (auto& p : TrackingReader(local()).metrics(mirror.local_run())) score[p.step] = p.value;
  EXPECT_EQ(score,
            (std::map<int64_t, double>{{1, 0.1}, {2, 0.2}, {3, 0.1 * 3}, {4, 0.4}, {5, 0.55}, {6, 0.67}}));
  EXPECT_EQ(TrackingReader(local()).samples(mirror.local_run()).size(), 4u);
}

TEST_F(RunStreamTest, ABatchCutOffMidwayComesAgainFromTheCommittedCursorAndIsWrittenOnce) {
  TrackingWriter w(source());
  const int64_t run = start(w);
  for (int64_t step = 1; step <= 4; ++step) w.log_metric(run, "loss", step, step);
  w.flush();
  int64_t local_run = 0;
  {
    RunStream stream(source(), run);
    RunMirror mirror(local(), "h", "/db", run);
    pump(stream, mirror);
    local_run = mirror.local_run();
    for (int64_t step = 5; step <= 8; ++step) w.log_metric(run, "loss", step, step);
    w.log_event(run, "info", "c", "half way");
    w.flush();
    auto lines = stream.next_batch();
    ASSERT_GE(lines.size(), 3u);
    for (size_t i = 0; i + 1 < lines.size(); ++i) mirror.apply(lines[i]);  // the link drops before the cursor
    mirror.discard_partial_batch();
  }
  EXPECT_EQ(rows_of(local(), local_run)["metrics"].size(), 4u);
  // A new mirror (a restarted `rlwb run --remote`) finds the run and its cursor.
  RunMirror mirror(local(), "h", "/db", run);
  EXPECT_EQ(mirror.local_run(), local_run);
  RunStream again(source(), run, mirror.cursor());
  w.end_run(run, "finished");
  pump(again, mirror);
  EXPECT_EQ(rows_of(local(), local_run), rows_of(source(), run));
  EXPECT_EQ(rows_of(local(), local_run)["metrics"].size(), 8u);
}

TEST_F(RunStreamTest, WhatIsNotAStreamIsRefusedWithWhatIsWrongAndWritesNothing) {
  TrackingWriter w(source());
  const int64_t run = start(w);
  w.log_metric(run, "loss", 1, 1);
  w.end_run(run, "finished");
  RunStream stream(source(), run);
  const auto lines = stream.next_batch();
  RunMirror mirror(local(), "h", "/db", run);
  try {
    mirror.apply("Welcome to Ubuntu 24.04");
    FAIL() << "took a line that is not JSON";
  } catch (const TrackingError& e) {
    EXPECT_NE(std::string(e.what()).find("not a line of a run stream: 'Welcome"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(mirror.apply(R"({"kind":"teleport"})"), TrackingError);
  // Rows before the run's row: the batch is refused whole.
  try {
    mirror.apply(lines[2]);  // the rows line, without the run and params lines
    mirror.apply(lines.back());
    FAIL() << "took rows before the run";
  } catch (const TrackingError& e) {
    EXPECT_NE(std::string(e.what()).find("before the run's row"), std::string::npos) << e.what();
  }
  EXPECT_EQ(mirror.local_run(), 0);
  for (const auto& line : lines) mirror.apply(line);
  // The same batch again would write its rows twice: refused, nothing written.
  try {
    for (size_t i = 2; i < lines.size(); ++i) mirror.apply(lines[i]);
    FAIL() << "took a batch twice";
  } catch (const TrackingError& e) {
    EXPECT_NE(std::string(e.what()).find("came again"), std::string::npos) << e.what();
  }
  EXPECT_EQ(rows_of(local(), mirror.local_run()), rows_of(source(), run));

  try {
    StreamCursor::parse("metrics=12,evnts=3");
    FAIL() << "took a misspelt table";
  } catch (const TrackingError& e) {
    EXPECT_NE(std::string(e.what()).find("'evnts=3' is not TABLE=ROWID"), std::string::npos) << e.what();
  }
  EXPECT_THROW(StreamCursor::parse("metrics=-1"), TrackingError);
  EXPECT_THROW(StreamCursor::parse("events.superseded=2"), TrackingError);
  const StreamCursor cursor = StreamCursor::parse("metrics=12,metrics.superseded=2,events=3,params=1");
  EXPECT_EQ(StreamCursor::parse(cursor.to_string()).to_string(), cursor.to_string());
  EXPECT_THROW(RunStream(source(), run + 1), TrackingError);
}

}  // namespace
}  // namespace rlwb::core::tracking_test
