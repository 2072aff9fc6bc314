#include "core/controller/task_prefetch.h"

#include <pthread.h>
#include <sched.h>

namespace rlwb::core {

TaskPrefetch::TaskPrefetch(DrawFn draw) : draw_(std::move(draw)) {}

TaskPrefetch::~TaskPrefetch() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void TaskPrefetch::prefetch(const tasks::TaskDraw& next) {
  // Never wait for the idle-priority thread: on a busy host it may sit
  // preempted inside its few lines under the lock for a long while. When
  // it holds the lock, this request is skipped and its step draws itself.
  std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);
  if (!lock.owns_lock()) return;
  requested_ = next;
  ready_draw_.reset();
  ready_.reset();
  if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
  lock.unlock();
  cv_.notify_all();
}

Batch TaskPrefetch::take(const tasks::TaskDraw& draw) {
  {
    std::unique_lock<std::mutex> lock(mu_, std::try_to_lock);  // as in prefetch()
    if (lock.owns_lock() && ready_draw_ == draw && ready_) {
      Batch batch = std::move(*ready_);
      ready_draw_.reset();
      ready_.reset();
      ++prefetched_;
      return batch;
    }
  }
  ++drawn_here_;
  return draw_(draw);
}

int64_t TaskPrefetch::prefetched() const { return prefetched_; }

int64_t TaskPrefetch::drawn_here() const { return drawn_here_; }

bool TaskPrefetch::wait_ready(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait_for(lock, timeout, [&] { return !requested_ && !drawing_; });
  return ready_.has_value();
}

void TaskPrefetch::loop() {
  // Idle priority: only cores nobody else wants (the header says why). A
  // kernel that refuses leaves the thread at normal priority, which is
  // still correct, only no longer free.
  sched_param idle{};
  pthread_setschedparam(pthread_self(), SCHED_IDLE, &idle);
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stopping_ || requested_; });
    if (stopping_) return;
    const tasks::TaskDraw draw = *requested_;
    requested_.reset();
    drawing_ = true;
    lock.unlock();
    std::optional<Batch> batch;
    try {
      batch = draw_(draw);
    } catch (...) {
      // take() draws again on its own thread, where the error is thrown.
    }
    lock.lock();
    drawing_ = false;
    if (!requested_) {  // not overtaken by a newer request
      ready_draw_ = draw;
      ready_ = std::move(batch);
    }
    cv_.notify_all();
  }
}

}  // namespace rlwb::core
