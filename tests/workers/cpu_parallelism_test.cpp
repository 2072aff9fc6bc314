// The library's at::parallel_for calls use torch's intra-op threads
// (workers/cpu_parallelism.h): without OpenMP in the build they ran on one.
#include "workers/cpu_parallelism.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

namespace rlwb::workers {
namespace {

class IntraOpThreads {  // the test's thread count, restored after
 public:
  explicit IntraOpThreads(int n) : previous_(at::get_num_threads()) { at::set_num_threads(n); }
  ~IntraOpThreads() { at::set_num_threads(previous_); }

 private:
  int previous_;
};

TEST(CpuParallelism, TheLibrarysParallelForSpreadsOverTorchsIntraOpThreads) {
  {
    IntraOpThreads two(2);
    EXPECT_EQ(parallel_for_threads(8), 2) << "rlwb_workers is built without OpenMP: at::parallel_for runs "
                                             "serially in its files (workers/CMakeLists.txt)";
  }
  IntraOpThreads one(1);
  EXPECT_EQ(parallel_for_threads(8), 1);
}

}  // namespace
}  // namespace rlwb::workers
