// A fixed set of executors (executor.h) shared by threads: exec() borrows a
// free one for one job -- preferably one whose next sandbox is already
// prepared, else the one that has been free longest. Waiting for a free executor is bounded
// (acquire_timeout); a caller that gets none receives a sandbox_error
// result rather than waiting forever. Used by LocalSandbox and the service.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "sandbox/executor.h"

namespace rlwb::sandbox {

struct PoolOptions {
  int executors = 0;  // 0: one per CPU
  ExecutorConfig executor;
  std::chrono::milliseconds acquire_timeout{std::chrono::minutes(10)};
};

class ExecutorPool {
 public:
  // Starts every executor; throws SandboxError if the kernel refuses.
  explicit ExecutorPool(PoolOptions options = {});
  ~ExecutorPool();
  ExecutorPool(const ExecutorPool&) = delete;
  ExecutorPool& operator=(const ExecutorPool&) = delete;

  ExecResult exec(const ExecJob& job);

  // Exclusive use of one executor until the lease ends.
  class Lease {
   public:
    Lease(ExecutorPool* pool, Executor* e) : pool_(pool), executor_(e) {}
    Lease(Lease&& o) noexcept : pool_(o.pool_), executor_(o.executor_) { o.executor_ = nullptr; }
    Lease& operator=(Lease&&) = delete;
    ~Lease();
    Executor* get() const { return executor_; }  // null when none was free in time
    explicit operator bool() const { return executor_ != nullptr; }

   private:
    ExecutorPool* pool_;
    Executor* executor_;
  };
  Lease acquire(std::chrono::milliseconds timeout);

  int size() const { return static_cast<int>(executors_.size()); }
  const KernelSupport& kernel_support() const { return executors_.front()->kernel_support(); }
  std::vector<pid_t> pids() const;

 private:
  void release(Executor* e);
  PoolOptions options_;
  std::vector<std::unique_ptr<Executor>> executors_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Executor*> free_;  // least recently used first
};

int default_executor_count();  // one per CPU the process may run on

}  // namespace rlwb::sandbox
