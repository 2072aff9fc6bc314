#include "sandbox/executor_pool.h"

#include <sched.h>

#include <future>

#include "sandbox/sandbox_error.h"

namespace rlwb::sandbox {

int default_executor_count() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return std::max(1, CPU_COUNT(&set));
  return 1;
}

ExecutorPool::ExecutorPool(PoolOptions options) : options_(options) {
  int n = options_.executors > 0 ? options_.executors : default_executor_count();
  if (n > 256) throw SandboxError("executors = " + std::to_string(n) + ": at most 256");
  executors_.resize(static_cast<size_t>(n));
  // Start them one after another: fork() from one thread keeps this simple
  // and each start takes only a few milliseconds.
  for (int i = 0; i < n; ++i)
    executors_[static_cast<size_t>(i)] = std::make_unique<Executor>(i, options_.executor);
  for (auto& e : executors_) free_.push_back(e.get());
}

ExecutorPool::~ExecutorPool() = default;

ExecutorPool::Lease::~Lease() {
  if (executor_) pool_->release(executor_);
}

ExecutorPool::Lease ExecutorPool::acquire(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  if (!cv_.wait_for(lock, timeout, [&] { return !free_.empty(); })) return Lease(this, nullptr);
  auto pick = free_.begin();
  for (auto it = free_.begin(); it != free_.end(); ++it)
    if ((*it)->wait_ready(std::chrono::milliseconds(0))) {
      pick = it;
      break;
    }
  Executor* e = *pick;
  free_.erase(pick);
  return Lease(this, e);
}

void ExecutorPool::release(Executor* e) {
  {
    std::lock_guard lock(mu_);
    free_.push_back(e);
  }
  cv_.notify_one();
}

ExecResult ExecutorPool::exec(const ExecJob& job) {
  Lease lease = acquire(options_.acquire_timeout);
  if (!lease) {
    ExecResult r;
    r.sandbox_error =
        "no sandbox executor became free within " + std::to_string(options_.acquire_timeout.count()) + " ms";
    return r;
  }
  return lease.get()->exec(job);
}

std::vector<pid_t> ExecutorPool::pids() const {
  std::vector<pid_t> p;
  for (auto& e : executors_) p.push_back(e->pid());
  return p;
}

}  // namespace rlwb::sandbox
