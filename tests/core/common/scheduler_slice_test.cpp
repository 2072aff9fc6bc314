// request_short_scheduler_slice: the slice the kernel keeps for the thread
// and its new threads, with the thread's nice value left alone.
#include "core/common/scheduler_slice.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <thread>

namespace {

// se.slice in /proc/thread-self/sched (nanoseconds); -1 where the kernel
// does not show it (before EEVDF).
long long slice_of_this_thread() {
  std::ifstream f("/proc/thread-self/sched");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("se.slice", 0) == 0) return std::stoll(line.substr(line.find(':') + 1));
  return -1;
}

// Linux 6.12 and later keep a slice asked for (older ones ignore it).
bool kernel_keeps_custom_slices() {
  std::ifstream f("/proc/sys/kernel/osrelease");
  int major = 0, minor = 0;
  char dot = 0;
  f >> major >> dot >> minor;
  return major > 6 || (major == 6 && minor >= 12);
}

TEST(SchedulerSlice, TheThreadAndItsNewThreadsGetTheShortSliceAndKeepTheirNiceValue) {
  // On a thread of its own: the test runner's thread keeps its slice.
  std::thread([] {
    const auto tid = static_cast<id_t>(syscall(SYS_gettid));
    ASSERT_EQ(setpriority(PRIO_PROCESS, tid, 3), 0);
    ASSERT_TRUE(rlwb::core::request_short_scheduler_slice());
    EXPECT_EQ(getpriority(PRIO_PROCESS, tid), 3) << "the nice value stays";
    if (!kernel_keeps_custom_slices() || slice_of_this_thread() < 0)
      GTEST_SKIP() << "this kernel ignores the slice (before Linux 6.12)";
    const long long wanted = std::chrono::nanoseconds(rlwb::core::kShortSchedulerSlice).count();
    EXPECT_EQ(slice_of_this_thread(), wanted);
    long long child = 0;
    std::thread([&] { child = slice_of_this_thread(); }).join();
    EXPECT_EQ(child, wanted) << "a thread started afterwards inherits it";
  }).join();
}

}  // namespace
