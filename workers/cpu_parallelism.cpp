#include "workers/cpu_parallelism.h"

#include <ATen/Parallel.h>

#include <atomic>
#include <bit>
#include <chrono>
#include <thread>

namespace rlwb::workers {

int parallel_for_threads(int64_t work) {
  std::atomic<uint64_t> seen{0};  // bit i: thread i took a part
  at::parallel_for(0, work, 1, [&](int64_t, int64_t) {
    seen.fetch_or(uint64_t{1} << (at::get_thread_num() % 64));
    // Long enough that one thread cannot take every part before the others start.
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  });
  return std::popcount(seen.load());
}

}  // namespace rlwb::workers
