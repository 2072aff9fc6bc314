// How ctest runs the tests (tests/CMakeLists.txt): two at once on a
// 2-core host (scripts/test.sh: -j 2), so each test's own LibTorch work
// must use one intra-op thread, as the workers already do
// (core/controller/worker_cluster.cpp). With torch's default of one thread
// per core, two tests that compute in-process ran their OpenMP regions
// against each other: a 6-second test took 50 s beside a twin and over
// 300 s (the timeout) in one CI run.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cstdlib>

TEST(TestEnvironment, EveryTestComputesOnOneIntraOpThreadSoTwoAtOnceDoNotContend) {
  if (!std::getenv("RLWB_UNDER_CTEST")) GTEST_SKIP() << "run by ctest, which sets the test environment";
  EXPECT_EQ(at::get_num_threads(), 1) << "tests/CMakeLists.txt should set OMP_NUM_THREADS=1 for every test";
}
