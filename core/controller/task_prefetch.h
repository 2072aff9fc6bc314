// The next step's task batch, drawn ahead on a background thread while the
// current step runs, as a data loader prefetches: the draw (the task's rows,
// repeated samples_per_prompt times) is then off the step's critical path.
//
// The thread runs at SCHED_IDLE: it takes only CPU time that no worker rank
// and no other controller thread wants, so on a host whose cores the ranks
// fill it costs them nothing. A draw that is not ready when its step starts
// is drawn again on the caller's thread -- a draw is a pure function of the
// TaskDraw and the task settings, so both give the same rows -- and the
// step never waits for the background thread, not even for its lock.
//
// The draw function runs on the background thread: it must not touch state
// another thread changes (the task sources in core/tasks are safe so).
#pragma once

#include "core/batch/batch.h"
#include "core/tasks/task_source.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

namespace rlwb::core {

class TaskPrefetch {
 public:
  using DrawFn = std::function<Batch(const tasks::TaskDraw&)>;

  explicit TaskPrefetch(DrawFn draw);
  // Waits for a draw in progress (milliseconds of work).
  ~TaskPrefetch();
  TaskPrefetch(const TaskPrefetch&) = delete;
  TaskPrefetch& operator=(const TaskPrefetch&) = delete;

  // Starts drawing `next` in the background; a request not yet begun is
  // replaced, a prefetched batch not taken is dropped.
  void prefetch(const tasks::TaskDraw& next);
  // `draw`'s batch: the prefetched one when it is that draw's and ready,
  // else drawn here (and a draw that fails throws here, as without the
  // prefetch).
  Batch take(const tasks::TaskDraw& draw);

  // How many takes got a prefetched batch, and how many drew their own.
  int64_t prefetched() const;
  int64_t drawn_here() const;
  // Until the requested draw is ready (or failed), at most `timeout`; true
  // when a batch is ready. For tests.
  bool wait_ready(std::chrono::milliseconds timeout);

 private:
  void loop();

  DrawFn draw_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::optional<tasks::TaskDraw> requested_;  // not begun yet
  bool drawing_ = false;                      // the thread is drawing
  std::optional<tasks::TaskDraw> ready_draw_;
  std::optional<Batch> ready_;  // ready_draw_'s batch (none when its draw failed)
  bool stopping_ = false;
  std::atomic<int64_t> prefetched_{0}, drawn_here_{0};
  std::thread thread_;  // started by the first prefetch
};

}  // namespace rlwb::core
