// Shared by every test layer that works on files: a fresh directory per
// test (kept when the test fails, or always with RLWB_KEEP_TEST_DIRS=1, so
// its screenshots, logs and databases can be inspected) and byte-level file
// helpers for "leaves the file untouched" checks.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>

namespace rlwb::testing {

class TempDirTest : public ::testing::Test {
 protected:
  explicit TempDirTest(std::string stem = "rlwb-test") : stem_(std::move(stem)) {}
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / (stem_ + "-XXXXXX")).string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    if (!HasFailure() && !std::getenv("RLWB_KEEP_TEST_DIRS"))
      std::filesystem::remove_all(dir_);
    else
      std::cerr << "kept " << dir_ << " for inspection\n";
  }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }

  std::filesystem::path dir_;

 private:
  std::string stem_;
};

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

}  // namespace rlwb::testing
