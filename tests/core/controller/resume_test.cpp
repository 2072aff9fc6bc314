// rlwb run --resume's checks before anything starts (core/controller/
// resume.h) against a real tracking DB and real checkpoint folders.
#include "core/controller/resume.h"

#include "core/common/durable_file.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

#include <filesystem>

using namespace rlwb::core;
namespace fs = std::filesystem;

namespace {

struct Resume : rlwb::testing::TempDirTest {
  Resume() : TempDirTest("rlwb-resume") {}
  void SetUp() override {
    TempDirTest::SetUp();
    db = path("rlwb.db");
  }
  std::string db;
  Experiment exp = load_experiment_file(std::string(rlwb::testing::kSourceDir) + "/experiments/ppo.yaml");

  // A checkpoint of `step` for `of` (its models' signature), as the trainer seals it.
  std::string checkpoint(int64_t step, const Experiment& of) {
    const std::string dir = (dir_ / "ckpt" / checkpoint_folder_name(step)).string();
    fs::create_directories(fs::path(partial_folder(dir)) / "actor");
    write_file_durably((fs::path(partial_folder(dir)) / "actor" / "rank-0.pt").string(),
                       std::string(64, 'w'));
    CheckpointManifest m;
    m.step = step;
    m.models = checkpoint_model_signature(of);
    seal_checkpoint(dir, m);
    return dir;
  }
  int64_t failed_run(TrackingWriter& w, const std::vector<std::string>& checkpoints) {
    int64_t run = w.start_run("r", exp.file, exp.text, exp.algorithm, exp.seed, exp.raw);
    for (auto& c : checkpoints) w.log_artifact(run, kResumeCheckpointArtifact, c);
    w.end_run(run, "failed", "killed");
    return run;
  }
  std::string error_of(int64_t run, const Experiment& with) {
    TrackingReader reader(db);
    try {
      plan_resume(reader, resumable_run(reader, run, db), with);
    } catch (const ResumeError& e) {
      return e.what();
    }
    return "";
  }
};

TEST_F(Resume, AnUnknownRunIsAnErrorThatSaysHowToListRuns) {
  TrackingWriter w(db);
  failed_run(w, {});
  const std::string e = error_of(99, exp);
  EXPECT_NE(e.find("there is no run 99"), std::string::npos) << e;
  EXPECT_NE(e.find("rlwb runs list"), std::string::npos) << e;
}

TEST_F(Resume, AFinishedRunIsAnError) {
  TrackingWriter w(db);
  int64_t run = w.start_run("r", exp.file, exp.text, exp.algorithm, exp.seed, exp.raw);
  w.end_run(run, "finished");
  const std::string e = error_of(run, exp);
  EXPECT_NE(e.find("finished; there is nothing to resume"), std::string::npos) << e;
}

TEST_F(Resume, ARunWithoutCheckpointsIsAnErrorNamingTheSetting) {
  TrackingWriter w(db);
  const std::string e = error_of(failed_run(w, {}), exp);
  EXPECT_NE(e.find("has no checkpoint"), std::string::npos) << e;
  EXPECT_NE(e.find("trainer.checkpoint.every"), std::string::npos) << e;
}

TEST_F(Resume, ADamagedNewestCheckpointFallsBackToTheOneBefore) {
  TrackingWriter w(db);
  const std::string two = checkpoint(2, exp), four = checkpoint(4, exp);
  fs::resize_file(fs::path(four) / "actor" / "rank-0.pt", 3);
  int64_t run = failed_run(w, {two, four});
  TrackingReader reader(db);
  ResumePlan plan = plan_resume(reader, resumable_run(reader, run, db), exp);
  EXPECT_EQ(plan.checkpoint.dir, two);
  EXPECT_EQ(plan.checkpoint.manifest.step, 2);
  ASSERT_EQ(plan.checkpoint.skipped.size(), 1u);
  EXPECT_NE(plan.checkpoint.skipped[0].find("truncated"), std::string::npos);
  // Every one damaged: an error listing each.
  fs::resize_file(fs::path(two) / "actor" / "rank-0.pt", 3);
  const std::string e = error_of(run, exp);
  EXPECT_NE(e.find("no usable checkpoint"), std::string::npos) << e;
  EXPECT_NE(e.find(two), std::string::npos) << e;
}

TEST_F(Resume, AGraphFileWithAnotherModelShapeIsAnErrorSayingWhatChanged) {
  TrackingWriter w(db);
  int64_t run = failed_run(w, {checkpoint(2, exp)});
  Experiment wider = load_experiment_file(exp.file, {"models.actor.config.model.hidden_size=64"});
  const std::string e = error_of(run, wider);
  EXPECT_NE(e.find("models.actor.model.hidden_size: 128 in the checkpoint, 64 now"), std::string::npos) << e;
  // A setting that does not touch the checkpoint's shapes (the step count) is fine.
  Experiment longer = load_experiment_file(exp.file, {"trainer.steps=500"});
  EXPECT_EQ(error_of(run, longer), "");
}

}  // namespace
