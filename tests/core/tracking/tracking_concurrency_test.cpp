// The tracking DB under concurrency and crashes: readers (threads and other
// processes) polling while the writer writes, maintenance next to a live
// writer, a writer killed with SIGKILL, and the write rate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>
#include <thread>

#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using namespace tracking_test;
using Clock = std::chrono::steady_clock;

constexpr int kMetricCount = 10000;

// What a poller saw: rows in rowid order with consecutive steps, and how
// many polls brought new rows (more than one proves it read during writes).
struct PollResult {
  int64_t rows = 0;
  int polls_with_new_rows = 0;
  std::string error;  // empty when every poll succeeded and order held
};

// Polls metrics of `run` by rowid until `expected` rows arrived or 60 s pass.
// The writer logs key "a" with steps 0, 1, 2, ... in order.
PollResult poll_until(const std::string& db_path, int64_t run, int64_t expected) {
  PollResult result;
  try {
    TrackingReader reader(db_path);
    int64_t cursor = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (result.rows < expected && Clock::now() < deadline) {
      const auto points = reader.metrics(run, cursor);
      if (!points.empty()) ++result.polls_with_new_rows;
      for (const MetricPoint& point : points) {
        if (point.rowid <= cursor || point.step != result.rows) {
          result.error = "out of order at row " + std::to_string(result.rows) + ": rowid " +
                         std::to_string(point.rowid) + " step " + std::to_string(point.step);
          return result;
        }
        cursor = point.rowid;
        ++result.rows;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (reader.metrics(run).size() != static_cast<size_t>(expected)) {
      result.error = "final count " + std::to_string(reader.metrics(run).size());
    }
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  return result;
}

void write_steps(TrackingWriter& writer, int64_t run, int count) {
  for (int step = 0; step < count; ++step) {
    writer.log_metric(run, "a", step, step * 0.01);
    if (step % 100 == 99) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  writer.flush();
}

TEST_F(TrackingTest, ReaderThreadPollingDuring10kMetricWritesSeesOrderedGrowthAndTheExactCount) {
  TrackingWriter writer(path(), 10);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  PollResult polled;
  std::thread reader([&] { polled = poll_until(path(), run, kMetricCount); });
  write_steps(writer, run, kMetricCount);
  reader.join();
  EXPECT_EQ(polled.error, "");
  EXPECT_EQ(polled.rows, kMetricCount);
  EXPECT_GT(polled.polls_with_new_rows, 1) << "the reader should see the data grow";
}

TEST_F(TrackingTest, ReaderProcessPollingDuring10kMetricWritesSeesOrderedGrowthAndTheExactCount) {
  int run_pipe[2];
  ASSERT_EQ(pipe(run_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the reader process: exit 0 when all is well
    close(run_pipe[1]);
    int64_t run = 0;
    if (read(run_pipe[0], &run, sizeof run) != sizeof run) _exit(3);
    const PollResult polled = poll_until(path(), run, kMetricCount);
    if (!polled.error.empty()) std::fprintf(stderr, "reader process: %s\n", polled.error.c_str());
    _exit(polled.error.empty() && polled.rows == kMetricCount && polled.polls_with_new_rows > 1 ? 0 : 1);
  }
  close(run_pipe[0]);
  TrackingWriter writer(path(), 10);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  ASSERT_EQ(write(run_pipe[1], &run, sizeof run), static_cast<ssize_t>(sizeof run));
  close(run_pipe[1]);
  write_steps(writer, run, kMetricCount);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the reader process saw errors or disorder (stderr)";
}

TEST_F(TrackingTest, MaintenanceNextToABusyWriterNeverSurfacesLockErrors) {
  TrackingWriter writer(path(), 5);
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  const int64_t other = writer.start_run("other", "", "", "ppo", 0, nullptr);
  std::thread writing([&] { write_steps(writer, run, 20000); });
  TrackingAdmin admin(path());
  for (int i = 0; i < 200; ++i) {
    admin.set_tag(other, "round", std::to_string(i));
    admin.rename_run(other, "other-" + std::to_string(i));
  }
  writing.join();
  TrackingReader reader(path());
  EXPECT_EQ(reader.metrics(run).size(), 20000u);
  EXPECT_EQ(reader.run(other)->name, "other-199");
}

TEST_F(TrackingTest, KilledWriterProcessLeavesEveryFlushedMetricAndTheRunCanBeMarkedFailed) {
  constexpr int kFlushIntervalMs = 100;
  int run_pipe[2];
  ASSERT_EQ(pipe(run_pipe), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the controller: logs, then hangs until killed
    close(run_pipe[0]);
    TrackingWriter writer(path(), kFlushIntervalMs);
    const int64_t run = writer.start_run("doomed", "", "", "ppo", 0, nullptr);
    for (int step = 0; step < 500; ++step) writer.log_metric(run, "a", step, step);
    writer.flush();
    for (int step = 500; step < 700; ++step) writer.log_metric(run, "a", step, step);
    writer.log_event(run, "info", "controller", "step 699 done");
    // No flush: the background thread must have committed these by now.
    std::this_thread::sleep_for(std::chrono::milliseconds(5 * kFlushIntervalMs));
    if (write(run_pipe[1], &run, sizeof run) != sizeof run) _exit(3);
    pause();
    _exit(0);
  }
  close(run_pipe[1]);
  int64_t run = 0;
  ASSERT_EQ(read(run_pipe[0], &run, sizeof run), static_cast<ssize_t>(sizeof run));
  close(run_pipe[0]);
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status));

  {
    TrackingReader reader(path());
    const auto info = reader.run(run);
    EXPECT_EQ(info->status, "running") << "nobody ended it";
    EXPECT_EQ(info->pid, child);
    EXPECT_EQ(info->last_step, 699);
    const auto points = reader.metrics(run);
    ASSERT_EQ(points.size(), 700u);
    EXPECT_EQ(points.back().step, 699);
  }

  TrackingAdmin admin(path());
  EXPECT_THAT(admin.mark_stale_runs("failed"), ElementsAre(run));
  EXPECT_TRUE(admin.mark_stale_runs("failed").empty()) << "marked once";
  TrackingReader reader(path());
  EXPECT_EQ(reader.run(run)->status, "failed");
  EXPECT_GT(reader.run(run)->end_time, 0);
  const auto events = reader.events(run);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[1].level, "error");
  EXPECT_THAT(events[1].text, HasSubstr("pid " + std::to_string(child)));
  EXPECT_THAT(events[1].text, HasSubstr("crashed or was killed"));

  TrackingWriter next(path());  // the database is healthy for the next run
  EXPECT_GT(next.start_run("next", "", "", "ppo", 0, nullptr), run);
}

TEST_F(TrackingTest, WriteRateOfBatchedMetrics) {
  constexpr int kCount = 200000;
  TrackingWriter writer(path());
  const int64_t run = writer.start_run("r", "", "", "ppo", 0, nullptr);
  const auto start = Clock::now();
  for (int i = 0; i < kCount; ++i)
    writer.log_metric(run, i % 2 ? "actor/pg_loss" : "actor/entropy", i / 2, i);
  writer.flush();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  const double rate = kCount / seconds;
  std::cout << "[ metrics ] " << kCount << " metrics logged and committed in " << seconds
            << " s: " << static_cast<int64_t>(rate) << " metrics/s\n";
  RecordProperty("metrics_per_second", static_cast<int>(rate));
  EXPECT_GT(rate, 20000) << "far below what batching should give";

  TrackingReader reader(path());
  const auto read_start = Clock::now();
  EXPECT_EQ(reader.metrics(run).size(), static_cast<size_t>(kCount));
  const double read_seconds = std::chrono::duration<double>(Clock::now() - read_start).count();
  std::cout << "[ metrics ] read back in " << read_seconds
            << " s: " << static_cast<int64_t>(kCount / read_seconds) << " metrics/s\n";
}

}  // namespace
}  // namespace rlwb::core
