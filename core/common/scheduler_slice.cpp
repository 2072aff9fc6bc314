#include "core/common/scheduler_slice.h"

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

namespace rlwb::core {
namespace {

// The kernel's struct sched_attr (include/uapi/linux/sched/types.h); glibc
// before 2.41 declares neither it nor the calls.
struct SchedAttr {
  uint32_t size;
  uint32_t sched_policy;
  uint64_t sched_flags;
  int32_t sched_nice;
  uint32_t sched_priority;
  uint64_t sched_runtime;
  uint64_t sched_deadline;
  uint64_t sched_period;
  uint32_t sched_util_min;
  uint32_t sched_util_max;
};

}  // namespace

bool request_short_scheduler_slice() {
  SchedAttr attr{};
  if (syscall(SYS_sched_getattr, 0, &attr, sizeof attr, 0) != 0) return false;
  if (attr.sched_policy != SCHED_OTHER && attr.sched_policy != SCHED_BATCH) return false;
  attr.size = sizeof attr;
  attr.sched_flags = 0;
  attr.sched_runtime = static_cast<uint64_t>(std::chrono::nanoseconds(kShortSchedulerSlice).count());
  return syscall(SYS_sched_setattr, 0, &attr, 0) == 0;
}

}  // namespace rlwb::core
