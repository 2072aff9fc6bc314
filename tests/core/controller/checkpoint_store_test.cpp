// Checkpoints on disk (core/controller/checkpoint_store.h): sealed folders
// verify, a truncated, corrupt, unsealed or changed one is named as such,
// and the newest good one is found behind a bad one.
#include "core/controller/checkpoint_store.h"

#include "core/common/durable_file.h"
#include "tests/test_files.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace rlwb::core;
namespace fs = std::filesystem;

namespace {

struct CheckpointStore : rlwb::testing::TempDirTest {
  CheckpointStore() : TempDirTest("rlwb-ckpt-store") {}
  fs::path root() const { return dir_; }

  // A checkpoint of `step` as the workers and the trainer write it.
  std::string write(int64_t step) {
    const std::string dir = (root() / checkpoint_folder_name(step)).string();
    const fs::path partial = partial_folder(dir);
    fs::create_directories(partial / "actor");
    write_file_durably((partial / "actor" / "rank-0.pt").string(),
                       std::string(1000, 'a') + std::to_string(step));
    write_file_durably((partial / "actor" / "rank-1.pt").string(), std::string(900, 'b'));
    CheckpointManifest m;
    m.step = step;
    m.state = {{"node_state", {{"adv", {{"kl_coef", 0.0012345678901234567}}}}}};
    seal_checkpoint(dir, m);
    return dir;
  }
};

TEST_F(CheckpointStore, ASealedCheckpointVerifiesWithItsStepStateAndFiles) {
  const std::string dir = write(4);
  EXPECT_FALSE(fs::exists(partial_folder(dir)));
  CheckpointManifest m = verify_checkpoint(dir);
  EXPECT_EQ(m.step, 4);
  ASSERT_EQ(m.files.size(), 2u);
  EXPECT_EQ(m.files[0].path, "actor/rank-0.pt");
  EXPECT_EQ(m.files[0].bytes, 1001u);
  // A double survives the manifest exactly.
  EXPECT_EQ(m.state["node_state"]["adv"]["kl_coef"].get<double>(), 0.0012345678901234567);
}

TEST_F(CheckpointStore, ATruncatedFileIsDetectedBySize) {
  const std::string dir = write(2);
  fs::resize_file(fs::path(dir) / "actor" / "rank-1.pt", 100);
  try {
    verify_checkpoint(dir);
    FAIL() << "a truncated checkpoint verified";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("actor/rank-1.pt has 100 bytes"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("truncated"), std::string::npos) << e.what();
  }
}

TEST_F(CheckpointStore, AFlippedByteIsDetectedByTheChecksum) {
  const std::string dir = write(2);
  {
    std::fstream f(fs::path(dir) / "actor" / "rank-0.pt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(500);
    f.put('z');
  }
  try {
    verify_checkpoint(dir);
    FAIL() << "a corrupt checkpoint verified";
  } catch (const CheckpointError& e) {
    EXPECT_NE(std::string(e.what()).find("actor/rank-0.pt does not match its checksum"), std::string::npos)
        << e.what();
  }
}

TEST_F(CheckpointStore, AnUnsealedFolderIsNotACheckpoint) {
  fs::create_directories(root() / "step-000006" / "actor");
  EXPECT_THROW(verify_checkpoint((root() / "step-000006").string()), CheckpointError);
  EXPECT_THROW(verify_checkpoint((root() / "step-000008").string()), CheckpointError);  // gone
}

TEST_F(CheckpointStore, TheNewestGoodCheckpointIsUsedBehindADamagedOne) {
  const std::string two = write(2), four = write(4);
  fs::resize_file(fs::path(four) / "actor" / "rank-0.pt", 10);
  std::vector<std::string> skipped;
  auto found = newest_good_checkpoint({four, two}, &skipped);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->dir, two);
  EXPECT_EQ(found->manifest.step, 2);
  ASSERT_EQ(found->skipped.size(), 1u);
  EXPECT_NE(found->skipped[0].find(four), std::string::npos);
  fs::resize_file(fs::path(two) / "actor" / "rank-1.pt", 10);
  EXPECT_FALSE(newest_good_checkpoint({four, two}, &skipped));
  EXPECT_EQ(skipped.size(), 2u);
}

TEST_F(CheckpointStore, SealingTheSameStepAgainReplacesIt) {
  const std::string dir = write(2);
  EXPECT_EQ(write(2), dir);
  EXPECT_EQ(verify_checkpoint(dir).step, 2);
}

}  // namespace
