// Wall-clock time as stored in the tracking DB: unix seconds, as a double.
#pragma once

#include <chrono>

namespace rlwb::core {

inline double unix_time_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace rlwb::core
