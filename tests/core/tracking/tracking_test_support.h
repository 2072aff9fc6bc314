// Shared by the tracking_*_test.cpp files: a fresh directory per test, and
// byte-level file helpers for the "leaves the file untouched" checks.
#pragma once

#include <string>

#include "tests/test_files.h"

namespace rlwb::core::tracking_test {

class TrackingTest : public rlwb::testing::TempDirTest {
 protected:
  TrackingTest() : TempDirTest("rlwb-tracking") {}
  std::string path(const std::string& name = "rlwb.db") const { return TempDirTest::path(name); }
};

using rlwb::testing::read_bytes;
using rlwb::testing::write_bytes;

}  // namespace rlwb::core::tracking_test
