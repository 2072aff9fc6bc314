#include "workers/profiler/hardware_counters.h"

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

namespace rlwb::workers::profiler {

namespace {

int open_counter(uint64_t config, int group) {
  perf_event_attr attr;
  std::memset(&attr, 0, sizeof attr);
  attr.size = sizeof attr;
  attr.type = PERF_TYPE_HARDWARE;
  attr.config = config;
  attr.exclude_kernel = 1;
  attr.exclude_hv = 1;
  attr.read_format = PERF_FORMAT_GROUP;
  attr.disabled = group < 0 ? 1 : 0;
  return static_cast<int>(syscall(SYS_perf_event_open, &attr, 0 /* this thread */, -1, group, 0));
}

std::string paranoid_level() {
  std::ifstream f("/proc/sys/kernel/perf_event_paranoid");
  std::string level;
  return f >> level ? level : "unknown";
}

}  // namespace

HardwareCounters::~HardwareCounters() {
  if (instructions_ >= 0) close(instructions_);
  if (leader_ >= 0) close(leader_);
}

bool HardwareCounters::open() {
  tried_ = true;
  leader_ = open_counter(PERF_COUNT_HW_CPU_CYCLES, -1);
  if (leader_ < 0) {
    error_ = std::string("perf_event_open(cycles) failed: ") + std::strerror(errno) +
             " (kernel.perf_event_paranoid = " + paranoid_level() +
             "; a container may also forbid the call, or the CPU exposes no counters to it)";
    return false;
  }
  instructions_ = open_counter(PERF_COUNT_HW_INSTRUCTIONS, leader_);
  if (instructions_ < 0) {
    error_ = std::string("perf_event_open(instructions) failed: ") + std::strerror(errno);
    close(leader_);
    leader_ = -1;
    return false;
  }
  ioctl(leader_, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP);
  return true;
}

std::optional<CounterValues> HardwareCounters::read() {
  if (!tried_ && !open()) return std::nullopt;
  if (leader_ < 0) return std::nullopt;
  uint64_t values[3] = {0, 0, 0};  // nr, cycles, instructions
  if (::read(leader_, values, sizeof values) != static_cast<ssize_t>(sizeof values) || values[0] != 2) {
    if (error_.empty()) error_ = std::string("reading the counters failed: ") + std::strerror(errno);
    return std::nullopt;
  }
  return CounterValues{true, static_cast<int64_t>(values[1]), static_cast<int64_t>(values[2])};
}

}  // namespace rlwb::workers::profiler
