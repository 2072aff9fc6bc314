// TaskPrefetch: the next step's batch drawn on an idle-priority thread and
// handed over only when it is the draw asked for.
#include "core/controller/task_prefetch.h"

#include <gtest/gtest.h>
#include <sched.h>

#include <atomic>
#include <stdexcept>
#include <thread>

using namespace rlwb::core;
using namespace std::chrono_literals;

namespace {

// Draws a one-column batch naming the step, and notes which thread drew it
// and at what scheduling policy.
struct RecordingDraw {
  std::atomic<int> calls{0};
  std::atomic<bool> off_caller{false};
  std::atomic<int> policy{-1};
  std::thread::id caller = std::this_thread::get_id();
  bool fail = false;
  TaskPrefetch::DrawFn fn() {
    return [this](const tasks::TaskDraw& draw) {
      ++calls;
      if (std::this_thread::get_id() != caller) {
        off_caller = true;
        policy = sched_getscheduler(0);
      }
      if (fail) throw std::runtime_error("no such file: tasks.jsonl");
      Batch b;
      b.set_objects("step", {nlohmann::json(draw.step)});
      return b;
    };
  }
};

tasks::TaskDraw step(int64_t s) { return tasks::TaskDraw{s, false, 4, 2}; }

TEST(TaskPrefetch, HandsOverTheBatchDrawnAheadAtIdlePriority) {
  RecordingDraw recorder;
  TaskPrefetch prefetch(recorder.fn());
  prefetch.prefetch(step(2));
  ASSERT_TRUE(prefetch.wait_ready(10s));
  Batch b = prefetch.take(step(2));
  EXPECT_EQ(b.objects("step")[0], 2);
  EXPECT_EQ(recorder.calls, 1) << "taken, not drawn again";
  EXPECT_TRUE(recorder.off_caller);
  EXPECT_EQ(recorder.policy, SCHED_IDLE);
  EXPECT_EQ(prefetch.prefetched(), 1);
  EXPECT_EQ(prefetch.drawn_here(), 0);
}

TEST(TaskPrefetch, AnotherDrawIsDrawnHere) {
  RecordingDraw recorder;
  TaskPrefetch prefetch(recorder.fn());
  prefetch.prefetch(step(2));
  ASSERT_TRUE(prefetch.wait_ready(10s));
  // Same step, other settings: not the batch asked for.
  tasks::TaskDraw other = step(2);
  other.samples_per_prompt = 8;
  EXPECT_EQ(prefetch.take(other).objects("step")[0], 2);
  EXPECT_EQ(prefetch.take(step(3)).objects("step")[0], 3);
  EXPECT_EQ(prefetch.prefetched(), 0);
  EXPECT_EQ(prefetch.drawn_here(), 2);
  EXPECT_EQ(recorder.calls, 3);
}

TEST(TaskPrefetch, ABatchIsHandedOverOnce) {
  RecordingDraw recorder;
  TaskPrefetch prefetch(recorder.fn());
  prefetch.prefetch(step(5));
  ASSERT_TRUE(prefetch.wait_ready(10s));
  prefetch.take(step(5));
  prefetch.take(step(5));
  EXPECT_EQ(prefetch.prefetched(), 1);
  EXPECT_EQ(prefetch.drawn_here(), 1);
}

TEST(TaskPrefetch, ANewerRequestReplacesTheOlder) {
  RecordingDraw recorder;
  TaskPrefetch prefetch(recorder.fn());
  prefetch.prefetch(step(1));
  prefetch.prefetch(step(2));
  ASSERT_TRUE(prefetch.wait_ready(10s));
  EXPECT_EQ(prefetch.take(step(2)).objects("step")[0], 2);
  EXPECT_EQ(prefetch.prefetched(), 1);
}

TEST(TaskPrefetch, AFailedDrawThrowsWhereTheBatchIsTaken) {
  RecordingDraw recorder;
  recorder.fail = true;
  TaskPrefetch prefetch(recorder.fn());
  prefetch.prefetch(step(2));
  EXPECT_FALSE(prefetch.wait_ready(10s));
  EXPECT_THROW(
      {
        try {
          prefetch.take(step(2));
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "no such file: tasks.jsonl");
          throw;
        }
      },
      std::runtime_error);
  EXPECT_EQ(recorder.calls, 2);
}

TEST(TaskPrefetch, DestructionWaitsForTheDrawInProgress) {
  std::atomic<bool> started{false};
  std::atomic<int> finished{0};
  {
    TaskPrefetch prefetch([&](const tasks::TaskDraw&) {
      started = true;
      std::this_thread::sleep_for(100ms);
      ++finished;
      return Batch{};
    });
    prefetch.prefetch(step(1));
    for (int i = 0; i < 1000 && !started; ++i) std::this_thread::sleep_for(10ms);
    ASSERT_TRUE(started);
  }
  EXPECT_EQ(finished, 1) << "the thread was joined after its draw, not left running";
}

}  // namespace
