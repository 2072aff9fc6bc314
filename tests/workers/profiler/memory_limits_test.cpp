// The worker's memory readings: /proc and cgroup text parsed as the kernel
// writes it, and on this (Linux) host a limit and a resident-set peak read.
#include <gtest/gtest.h>

#include "workers/profiler/memory_limits.h"

#include <vector>

namespace rlwb::workers::profiler {
namespace {

TEST(MemoryLimits, ParsesKilobyteFieldsOfProcFiles) {
  const std::string status = "Name:\trlwb-worker\nVmPeak:\t  900 kB\nVmHWM:\t    1928 kB\nVmRSS:\t 1800 kB\n";
  EXPECT_EQ(parse_kb_field(status, "VmHWM"), 1928 * 1024);
  EXPECT_EQ(parse_kb_field("MemTotal:       24683656 kB\nMemFree: 1 kB\n", "MemTotal"),
            int64_t{24683656} * 1024);
  EXPECT_FALSE(parse_kb_field(status, "VmSwap").has_value());
  EXPECT_FALSE(parse_kb_field("VmHWM:\tlots\n", "VmHWM").has_value());
}

TEST(MemoryLimits, ParsesCgroupLimitsAndMaxIsNone) {
  EXPECT_EQ(parse_cgroup_limit("4294967296\n"), int64_t{4294967296});
  EXPECT_FALSE(parse_cgroup_limit("max\n").has_value());
  EXPECT_FALSE(parse_cgroup_limit("").has_value());
  EXPECT_FALSE(parse_cgroup_limit("99999999999999999999999").has_value());
}

TEST(MemoryLimits, ThisHostHasALimitAndThisProcessAPeak) {
  const MemoryReading limit = host_memory_limit(), rss = process_rss_peak();
  EXPECT_GT(limit.bytes, 0) << limit.note;
  EXPECT_GT(rss.bytes, 0) << rss.note;
  EXPECT_LT(rss.bytes, limit.bytes);
  std::vector<char> touched(64 << 20, 1);  // 64 MiB resident raises the high-water mark
  EXPECT_GE(process_rss_peak().bytes, rss.bytes + (32 << 20) + touched[touched.size() / 2] - 1);
}

}  // namespace
}  // namespace rlwb::workers::profiler
