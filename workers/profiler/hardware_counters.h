// Cycles and instructions of the calling thread through perf_event_open
// (user space only, so kernel.perf_event_paranoid up to 2 allows it). Opened
// on first read; where the kernel or a container refuses, read() gives
// nothing and why_unavailable() says why, once, for the profile's notes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rlwb::workers::profiler {

struct CounterValues {
  bool valid = false;
  int64_t cycles = 0, instructions = 0;
};

class HardwareCounters {
 public:
  HardwareCounters() = default;
  ~HardwareCounters();
  HardwareCounters(const HardwareCounters&) = delete;
  HardwareCounters& operator=(const HardwareCounters&) = delete;

  std::optional<CounterValues> read();
  const std::string& why_unavailable() const { return error_; }

 private:
  bool open();
  int leader_ = -1, instructions_ = -1;
  bool tried_ = false;
  std::string error_;
};

}  // namespace rlwb::workers::profiler
