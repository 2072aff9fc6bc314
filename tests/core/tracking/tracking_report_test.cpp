// The text of `rlwb runs list` and `rlwb runs show ID`, and the order every
// metric list shares: the headline metrics first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/tracking/headline_metrics.h"
#include "core/tracking/tracking.h"
#include "tests/core/tracking/tracking_test_support.h"

namespace rlwb::core {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace tracking_test;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

using Keys = std::vector<std::string>;

TEST(HeadlineMetrics, HeldOutScoreRewardAndKlComeFirstAndTheRestKeepTheirOrder) {
  const Keys keys = {"actor/entropy",     "actor/kl_loss",   "actor/pg_loss", "actor/ppo_kl",
                     "critic/score/mean", "perf/throughput", "val/score/mean"};
  EXPECT_EQ(headline_first(keys),
            (Keys{"val/score/mean", "critic/score/mean", "actor/kl_loss", "actor/entropy", "actor/pg_loss",
                  "actor/ppo_kl", "perf/throughput"}));
}

TEST(HeadlineMetrics, TheKlIsTheKlLossElseTheRewardPenaltyElseThePpoKl) {
  // Only the preferred KL moves up; another KL key stays where it was.
  EXPECT_EQ(headline_first({"a", "actor/ppo_kl", "actor/reward_kl_penalty", "b"}),
            (Keys{"actor/reward_kl_penalty", "a", "actor/ppo_kl", "b"}));
  EXPECT_EQ(headline_first({"a", "actor/ppo_kl"}), (Keys{"actor/ppo_kl", "a"}));
  EXPECT_EQ(headline_first({"actor/reward_kl_penalty", "actor/kl_loss"}),
            (Keys{"actor/kl_loss", "actor/reward_kl_penalty"}));
}

TEST(HeadlineMetrics, MissingHeadlinesAreNotAddedAndOtherKeysAreUntouched) {
  EXPECT_EQ(headline_first({}), Keys{});
  EXPECT_EQ(headline_first({"z", "a", "m"}), (Keys{"z", "a", "m"}));
  EXPECT_EQ(headline_first({"a", "critic/score/mean"}), (Keys{"critic/score/mean", "a"}));
  // A name that only starts like a headline is another metric.
  EXPECT_EQ(headline_first({"val/score/mean_at_1", "critic/score/mean/x"}),
            (Keys{"val/score/mean_at_1", "critic/score/mean/x"}));
}

TEST(RunsTable, SaysSoWhenThereAreNoRuns) { EXPECT_EQ(format_runs_table({}), "no runs recorded yet\n"); }

TEST(RunsTable, ShowsOneAlignedRowPerRun) {
  RunInfo finished;
  finished.id = 12;
  finished.name = "ppo-gsm8k-long-name";
  finished.algorithm = "ppo";
  finished.status = "finished";
  finished.start_time = 1700000000;
  finished.end_time = 1700000000 + 3725;
  finished.last_step = 99;
  finished.last_score = 0.8125;
  RunInfo fresh;
  fresh.id = 3;
  fresh.name = "grpo";
  fresh.algorithm = "grpo";
  fresh.status = "failed";
  fresh.start_time = 1700000000;
  fresh.end_time = 1700000042;

  const auto lines = lines_of(format_runs_table({finished, fresh}));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].rfind("ID  NAME", 0), 0u) << lines[0];
  for (const char* column : {"ALGORITHM", "STATUS", "STEP", "SCORE", "STARTED", "DURATION"}) {
    EXPECT_THAT(lines[0], HasSubstr(column));
  }
  EXPECT_THAT(lines[0], HasSubstr("SCORE (critic/score/mean)")) << "the header names its metric";
  const size_t status_column = lines[0].find("STATUS");
  EXPECT_EQ(lines[1].find("finished"), status_column);
  EXPECT_EQ(lines[2].find("failed"), status_column);
  const size_t score_column = lines[0].find("SCORE");
  EXPECT_EQ(lines[1].find("0.8125"), score_column);
  EXPECT_EQ(lines[2].substr(score_column, 2), "- ") << "no score yet";
  EXPECT_THAT(lines[1], HasSubstr(" 99 "));
  EXPECT_THAT(lines[1], HasSubstr("1h02m"));
  EXPECT_THAT(lines[2], HasSubstr("42s"));
}

TEST_F(TrackingTest, RunDetailsShowFieldsParamsLastMetricsTimingArtifactsAndEvents) {
  TrackingWriter writer(path());
  const int64_t run = writer.start_run("ppo-gsm8k", "experiments/ppo.yaml", "...", "ppo", 7,
                                       {{"trainer", {{"steps", 2}}}, {"data", {{"batch", 64}}}});
  for (int step = 0; step < 2; ++step) {
    writer.log_metric(run, "critic/score/mean", step, 0.5 + step * 0.25);
    writer.log_metric(run, "timing_s/gen", step, 2.0 + step);
    writer.log_metric(run, "timing_s/update_actor", step, 1.0);
  }
  writer.log_artifact(run, "checkpoint", "runs/1/step_2");
  writer.log_event(run, "info", "controller", "step 1 done");
  writer.end_run(run, "failed", "reward worker crashed");
  TrackingAdmin(path()).set_tag(run, "dataset", "gsm8k");

  TrackingReader reader(path());
  const std::string text = format_run_details(reader, run);
  EXPECT_EQ(text.rfind("Run " + std::to_string(run) + ": ppo-gsm8k\n", 0), 0u) << text;
  for (const char* expected :
       {"  status       failed\n", "  algorithm    ppo\n", "  experiment   experiments/ppo.yaml\n",
        "  seed         7\n", "  last step    1\n", "  last score   0.75\n", "  tag dataset  gsm8k\n",
        "\nParams\n  data.batch     64\n  trainer.steps  2\n", "KEY                STEP  LAST  MIN  MAX",
        "critic/score/mean  1     0.75  0.5  0.75", "KEY                    STEPS  MEAN  TOTAL  LAST",
        "timing_s/gen           2      2.5   5      3", "timing_s/update_actor  2      1     2      1",
        "checkpoint  runs/1/step_2", "info   controller  step 1 done",
        "error  controller  reward worker crashed"}) {
    EXPECT_THAT(text, HasSubstr(expected));
  }
  EXPECT_THAT(text, Not(HasSubstr("timing_s/gen           1"))) << "timing keys sit in their own section";
}

TEST_F(TrackingTest, RunDetailsListTheHeadlineMetricsFirst) {
  TrackingWriter writer(path());
  const int64_t run =
      writer.start_run("ppo", "experiments/ppo.yaml", "...", "ppo", 7, nlohmann::json::object());
  for (const char* key : {"actor/entropy", "actor/kl_loss", "critic/score/mean", "val/score/mean"})
    writer.log_metric(run, key, 0, 0.5);
  writer.end_run(run, "finished");
  TrackingReader reader(path());
  const std::string text = format_run_details(reader, run);
  const auto at = [&](const char* key) { return text.find(std::string(key) + "  "); };
  ASSERT_NE(at("actor/entropy"), std::string::npos) << text;
  EXPECT_LT(at("val/score/mean"), at("critic/score/mean")) << text;
  EXPECT_LT(at("critic/score/mean"), at("actor/kl_loss")) << text;
  EXPECT_LT(at("actor/kl_loss"), at("actor/entropy")) << text;
}

TEST_F(TrackingTest, RunDetailsOfAnUnknownRunSayWhereToFindIds) {
  { TrackingWriter writer(path()); }
  TrackingReader reader(path());
  try {
    format_run_details(reader, 5);
    FAIL() << "no error";
  } catch (const TrackingError& e) {
    EXPECT_THAT(e.what(), HasSubstr("there is no run 5"));
    EXPECT_THAT(e.what(), HasSubstr("rlwb runs list"));
  }
}

}  // namespace
}  // namespace rlwb::core
