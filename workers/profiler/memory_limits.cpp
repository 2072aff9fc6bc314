#include "workers/profiler/memory_limits.h"

#include <dlfcn.h>

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <fstream>
#include <sstream>

namespace rlwb::workers::profiler {

namespace {

std::optional<std::string> read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

std::optional<int64_t> parse_kb_field(const std::string& text, const std::string& key) {
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    int64_t kb = -1;
    std::string unit;
    if (!(fields >> kb) || kb < 0) return std::nullopt;
    fields >> unit;
    return unit == "kB" || unit.empty() ? std::optional<int64_t>(kb * 1024) : std::nullopt;
  }
  return std::nullopt;
}

std::optional<int64_t> parse_cgroup_limit(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  const std::string value = text.substr(begin, end - begin);
  if (value.empty() || !std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;  // "max": no limit
  try {
    return std::stoll(value);
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

MemoryReading host_memory_limit() {
  MemoryReading r;
  std::optional<int64_t> total;
  if (auto meminfo = read_text("/proc/meminfo")) total = parse_kb_field(*meminfo, "MemTotal");
  // v2 first; v1 reports "no limit" as a huge page-aligned number, which
  // the min with MemTotal below turns into the host's memory.
  std::optional<int64_t> cgroup;
  if (auto v2 = read_text("/sys/fs/cgroup/memory.max"))
    cgroup = parse_cgroup_limit(*v2);
  else if (auto v1 = read_text("/sys/fs/cgroup/memory/memory.limit_in_bytes"))
    cgroup = parse_cgroup_limit(*v1);
  if (total && cgroup)
    r.bytes = std::min(*total, *cgroup);
  else if (total)
    r.bytes = *total;
  else if (cgroup)
    r.bytes = *cgroup;
  if (r.bytes <= 0) {
    r.bytes = 0;
    r.note =
        "memory limit not read: neither MemTotal in /proc/meminfo nor a cgroup limit "
        "(/sys/fs/cgroup/memory.max, /sys/fs/cgroup/memory/memory.limit_in_bytes) was readable";
  }
  return r;
}

MemoryReading process_rss_peak() {
  MemoryReading r;
  if (auto status = read_text("/proc/self/status"))
    if (auto hwm = parse_kb_field(*status, "VmHWM")) r.bytes = *hwm;
  if (r.bytes <= 0) {
    r.bytes = 0;
    r.note = "resident-set peak not read: no VmHWM in /proc/self/status";
  }
  return r;
}

MemoryReading cuda_memory_limit(int device_index) {
  // The driver API by name, so that a CPU-only build and a host without a
  // driver compile and run the same code; torch has loaded the driver
  // already on a CUDA worker, so dlopen only finds it.
  using Init = int (*)(unsigned);
  using DeviceGet = int (*)(int*, int);
  using TotalMem = int (*)(size_t*, int);
  MemoryReading r;
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (!driver) {
    r.note = "device memory limit not read: libcuda.so.1 could not be opened";
    return r;
  }
  auto init = reinterpret_cast<Init>(dlsym(driver, "cuInit"));
  auto device_get = reinterpret_cast<DeviceGet>(dlsym(driver, "cuDeviceGet"));
  auto total_mem = reinterpret_cast<TotalMem>(dlsym(driver, "cuDeviceTotalMem_v2"));
  int device = 0, status = -1;
  size_t bytes = 0;
  if (init && device_get && total_mem && (status = init(0)) == 0 &&
      (status = device_get(&device, device_index)) == 0)
    status = total_mem(&bytes, device);
  dlclose(driver);
  if (status == 0 && bytes > 0)
    r.bytes = static_cast<int64_t>(bytes);
  else
    r.note = "device memory limit not read: the CUDA driver's cuDeviceTotalMem for device " +
             std::to_string(device_index) +
             (init && device_get && total_mem ? " returned error " + std::to_string(status)
                                              : std::string(" is not in libcuda.so.1"));
  return r;
}

}  // namespace rlwb::workers::profiler
