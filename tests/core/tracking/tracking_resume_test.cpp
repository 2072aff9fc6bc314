// TrackingWriter::resume_run (rlwb run --resume): the rows an earlier
// attempt wrote after the checkpoint are kept but never read again, and the
// run is running again.
#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

#include <gtest/gtest.h>

#include <map>

namespace rlwb::core::tracking_test {
namespace {

TEST_F(TrackingTest, AResumeSupersedesTheRowsAfterItsCheckpointSoNoStepIsReadTwice) {
  int64_t run = 0;
  {
    TrackingWriter w(path());
    run = w.start_run("r", "ppo.yaml", "", "ppo", 1, nlohmann::json::object());
    for (int64_t s = 1; s <= 3; ++s) w.log_metric(run, "warm_start/sft/loss", s, 1.0);
    for (int64_t s = 1; s <= 5; ++s) {
      w.log_metric(run, "critic/score/mean", s, 0.1 * s);
      w.log_sample(run, s, "p", "r", 0, nullptr);
    }
    w.end_run(run, "failed", "killed");
  }
  TrackingWriter w(path());
  auto [metrics, samples] = w.resume_run(run, 4, "/ckpt/step-000004");
  EXPECT_EQ(metrics, 1);  // step 5 only; the warm start's steps stay
  EXPECT_EQ(samples, 1);
  w.log_metric(run, "critic/score/mean", 5, 0.55);
  w.flush();
  TrackingReader reader(path());
  std::map<int64_t, double> score;
  int warm = 0;
  for (auto& p : reader.metrics(run)) {
    if (p.key == "critic/score/mean") EXPECT_TRUE(score.emplace(p.step, p.value).second) << p.step;
    warm += p.key == "warm_start/sft/loss";
  }
  EXPECT_EQ(score.size(), 5u);
  EXPECT_EQ(score[5], 0.55);
  EXPECT_EQ(warm, 3);
  EXPECT_EQ(reader.samples(run).size(), 4u);
  auto info = reader.run(run);
  EXPECT_EQ(info->status, "running");
  EXPECT_EQ(info->last_score, 0.55);
}

}  // namespace
}  // namespace rlwb::core::tracking_test
