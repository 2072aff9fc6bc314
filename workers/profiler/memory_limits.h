// How much memory a worker may use, and how much its process has used, for
// the profile's windows (the analyzer's memory-headroom rule holds a
// window's peak against its limit). Linux only; nothing here needs CUDA to
// build or to run:
//   host_memory_limit()    the smaller of the process's cgroup limit
//                          (v2 memory.max, else v1 memory.limit_in_bytes;
//                          "max" or a value above MemTotal is no limit) and
//                          the host's MemTotal (/proc/meminfo)
//   process_rss_peak()     the process's resident-set high-water mark,
//                          VmHWM of /proc/self/status (since it started)
//   cuda_memory_limit(i)   device i's total memory, through the CUDA
//                          driver (libcuda.so.1, opened at run time)
// Each returns bytes, or 0 with a note that says what could not be read.
// The parse_* functions are the readers' parsing, for the tests.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace rlwb::workers::profiler {

struct MemoryReading {
  int64_t bytes = 0;  // 0: unknown
  std::string note;   // why it is unknown; empty when bytes > 0
};

MemoryReading host_memory_limit();
MemoryReading process_rss_peak();
MemoryReading cuda_memory_limit(int device_index);

// "<Key>:   <n> kB" in a /proc file's text -> n * 1024 bytes.
std::optional<int64_t> parse_kb_field(const std::string& text, const std::string& key);
// A cgroup limit file's text: a number of bytes, or nullopt for "max" or junk.
std::optional<int64_t> parse_cgroup_limit(const std::string& text);

}  // namespace rlwb::workers::profiler
