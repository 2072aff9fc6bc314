// Run comparison shared by `rlwb runs compare/export` and the compare view:
// config diff, summaries, CSV, export; and the CLI commands themselves.
#include "core/tracking/run_compare.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>

#include "core/tracking/tracking.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"

namespace rlwb::core {
namespace {

using rlwb::testing::read_bytes;

TEST(ConfigDiff, OnlyDifferingKeysUnlessAllAreAskedFor) {
  std::vector<ParamList> params = {{{"lr", "0.1"}, {"seed", "1"}, {"steps", "3"}},
                                   {{"lr", "0.2"}, {"seed", "1"}},
                                   {{"lr", "0.1"}, {"seed", "1"}, {"steps", "3"}}};
  auto diff = config_diff(params).rows;
  ASSERT_EQ(diff.size(), 2u);
  EXPECT_EQ(diff[0].key, "lr");
  EXPECT_EQ(diff[0].values[1], "0.2");
  EXPECT_EQ(diff[1].key, "steps");
  EXPECT_FALSE(diff[1].values[1].has_value());  // missing differs from a value
  auto all = config_diff(params, {.all_keys = true}).rows;
  ASSERT_EQ(all.size(), 3u);
  EXPECT_FALSE(all[1].differs);
}

TEST(ConfigDiff, LayoutKeysAreHiddenAndCountedUnlessAskedFor) {
  // Two saves of one file from the editor: the nodes moved, lr changed.
  std::vector<ParamList> params = {
      {{"layout.gen.x", "100"}, {"layout.gen.y", "40"}, {"layout.ref.x", "300"}, {"lr", "0.1"}},
      {{"layout.gen.x", "120"}, {"layout.gen.y", "40"}, {"layout.ref.x", "310"}, {"lr", "0.2"}}};
  ConfigDiff diff = config_diff(params);
  ASSERT_EQ(diff.rows.size(), 1u);
  EXPECT_EQ(diff.rows[0].key, "lr");
  EXPECT_EQ(diff.hidden_layout_keys, 2u);  // the differing ones: gen.x and ref.x
  EXPECT_EQ(diff.keys, 1u);
  EXPECT_EQ(diff.differing, 1u);
  ConfigDiff all = config_diff(params, {.all_keys = true});
  EXPECT_EQ(all.rows.size(), 1u);
  EXPECT_EQ(all.hidden_layout_keys, 3u);  // every layout key would have been a row
  ConfigDiff with_layout = config_diff(params, {.layout_keys = true});
  ASSERT_EQ(with_layout.rows.size(), 3u);
  EXPECT_EQ(with_layout.rows[0].key, "layout.gen.x");
  EXPECT_EQ(with_layout.rows[1].key, "layout.ref.x");
  EXPECT_EQ(with_layout.hidden_layout_keys, 0u);
  EXPECT_EQ(with_layout.keys, 4u);
  EXPECT_EQ(with_layout.differing, 3u);
}

TEST(ConfigDiff, OnlyTheTopLevelLayoutSectionIsLayout) {
  EXPECT_TRUE(is_layout_key("layout.gen.x"));
  EXPECT_TRUE(is_layout_key("layout"));  // an empty `layout: {}`
  EXPECT_FALSE(is_layout_key("layouts.gen.x"));
  EXPECT_FALSE(is_layout_key("models.actor.config.layout.x"));
  EXPECT_FALSE(is_layout_key("models.actor.parallel.tp"));
}

TEST(SummarizeSeries, LastBestAndAtStep) {
  std::vector<double> steps = {0, 1, 2, 3, 5}, values = {1, 4, NAN, 2, 3};
  auto s = summarize_series(steps, values, BestIs::higher, 4);
  EXPECT_EQ(s.count, 4);
  EXPECT_EQ(*s.last_step, 5);
  EXPECT_EQ(s.last, 3);
  EXPECT_EQ(*s.best_step, 1);
  EXPECT_EQ(s.best, 4);
  EXPECT_EQ(*s.at_step, 3);  // the highest step <= 4
  EXPECT_EQ(s.at_value, 2);
  auto lower = summarize_series(steps, values, BestIs::lower);
  EXPECT_EQ(lower.best, 1);
  EXPECT_FALSE(lower.at_step.has_value());
  EXPECT_FALSE(summarize_series({}, {}, BestIs::higher).last_step.has_value());
}

TEST(BestDirection, LossesDownScoresUp) {
  EXPECT_EQ(best_direction("actor/pg_loss"), BestIs::lower);
  EXPECT_EQ(best_direction("actor/ppo_kl"), BestIs::lower);
  EXPECT_EQ(best_direction("timing_s/gen"), BestIs::lower);
  EXPECT_EQ(best_direction("critic/score/mean"), BestIs::higher);
  EXPECT_EQ(best_direction("perf/throughput"), BestIs::higher);
}

TEST(SummaryCsv, QuotesNamesAndWritesExactNumbers) {
  MetricRunSummary s;
  s.run = 3, s.run_name = "a, \"b\"", s.metric = "m", s.count = 1, s.last_step = 2, s.last = 0.1;
  s.best_step = 2, s.best = 0.1;
  std::string csv = summary_csv({s});
  EXPECT_EQ(csv,
            "run_id,run_name,metric,count,last_step,last,best_step,best,at_step,at_value\n"
            "3,\"a, \"\"b\"\"\",m,1,2,0.1,2,0.1,,\n");
  EXPECT_EQ(format_metric_value(1.0 / 3), "0.3333333333333333");  // shortest exact text
  EXPECT_EQ(std::strtod(format_metric_value(1.0 / 3).c_str(), nullptr), 1.0 / 3);
}

class RunCompareDbTest : public rlwb::testing::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    db_ = path("rlwb.db");
    TrackingWriter w(db_);
    // The node 'gen' was moved in the editor between the two runs.
    a_ = w.start_run("lr-small", "exp.yaml", "", "grpo", 1,
                     {{"lr", 0.1}, {"seed", 1}, {"layout", {{"gen", {{"x", 100}, {"y", 40}}}}}});
    b_ = w.start_run("lr-big", "exp.yaml", "", "grpo", 2,
                     {{"lr", 0.2}, {"seed", 2}, {"layout", {{"gen", {{"x", 300}, {"y", 40}}}}}});
    for (int step = 0; step < 5; ++step) {
      w.log_metric(a_, "critic/score/mean", step, step * 0.1);
      w.log_metric(b_, "critic/score/mean", step, 0.5 - step * 0.05);
      w.log_metric(a_, "actor/pg_loss", step, 1.0 / (step + 1));
    }
    w.end_run(a_, "finished");
    w.end_run(b_, "finished");
  }
  std::string db_;
  int64_t a_ = 0, b_ = 0;
};

TEST_F(RunCompareDbTest, CompareRunsReadsDiffAndSummaries) {
  TrackingReader reader(db_);
  RunComparison c = compare_runs(reader, {a_, b_}, {}, 2);
  ASSERT_EQ(c.runs.size(), 2u);
  ASSERT_EQ(c.diff.rows.size(), 2u);  // lr and seed differ; layout.gen.x is hidden
  EXPECT_EQ(c.diff.hidden_layout_keys, 1u);
  // The reward, a headline metric, comes first.
  EXPECT_EQ(c.metrics, (std::vector<std::string>{"critic/score/mean", "actor/pg_loss"}));
  ASSERT_EQ(c.summary.size(), 4u);
  const MetricRunSummary& score_b = c.summary[1];
  EXPECT_EQ(score_b.run, b_);
  EXPECT_DOUBLE_EQ(score_b.best, 0.5);
  EXPECT_EQ(*score_b.best_step, 0);
  EXPECT_DOUBLE_EQ(score_b.at_value, 0.4);
  const MetricRunSummary& loss_b = c.summary[3];
  EXPECT_EQ(loss_b.count, 0);  // run b logged no loss
  std::string text = format_comparison(c);
  EXPECT_NE(text.find("lr"), std::string::npos);
  EXPECT_NE(text.find("at step 2"), std::string::npos);
  EXPECT_NE(text.find("2 of 2 keys differ; 1 GUI layout key hidden (--layout-keys shows them)"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("layout.gen"), std::string::npos) << text;
  EXPECT_THROW(compare_runs(reader, {a_, 999}), TrackingError);
  RunComparison with_layout = compare_runs(reader, {a_, b_}, {}, std::nullopt, {.layout_keys = true});
  ASSERT_EQ(with_layout.diff.rows.size(), 3u);
  EXPECT_EQ(with_layout.diff.rows[0].key, "layout.gen.x");
  text = format_comparison(with_layout);
  EXPECT_NE(text.find("3 of 4 keys differ\n"), std::string::npos) << text;
  EXPECT_NE(text.find("layout.gen.x"), std::string::npos) << text;
}

TEST_F(RunCompareDbTest, AMetricNoRunLoggedIsAnErrorThatListsTheKnownOnes) {
  TrackingReader reader(db_);
  try {
    compare_runs(reader, {a_, b_}, {"critic/score/mean", "critic/scor"});
    FAIL() << "no error for a metric no run logged";
  } catch (const TrackingError& e) {
    EXPECT_NE(std::string(e.what()).find("'critic/scor'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("actor/pg_loss, critic/score/mean"), std::string::npos) << e.what();
  }
  // A metric only one run logged is fine: the other run's row is empty.
  EXPECT_EQ(compare_runs(reader, {a_, b_}, {"actor/pg_loss"}).summary.size(), 2u);
}

TEST_F(RunCompareDbTest, ExportWritesEveryPointAsCsvOrJsonLines) {
  TrackingReader reader(db_);
  std::ostringstream csv, jsonl;
  export_run_metrics(reader, a_, "csv", csv);
  export_run_metrics(reader, a_, "jsonl", jsonl);
  std::istringstream lines(csv.str());
  std::string header, first;
  std::getline(lines, header);
  std::getline(lines, first);
  EXPECT_EQ(header, "run_id,key,step,value,wall_time");
  EXPECT_EQ(first.rfind(std::to_string(a_) + ",critic/score/mean,0,0,", 0), 0u) << first;
  const std::string csv_text = csv.str();
  EXPECT_EQ(std::count(csv_text.begin(), csv_text.end(), '\n'), 11);
  std::istringstream jl(jsonl.str());
  std::string line;
  int n = 0;
  while (std::getline(jl, line)) {
    auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["run_id"], a_);
    ++n;
  }
  EXPECT_EQ(n, 10);
  EXPECT_THROW(export_run_metrics(reader, a_, "xml", csv), TrackingError);
}

TEST_F(RunCompareDbTest, CliCompareAndExport) {
  if (!std::filesystem::exists(rlwb::testing::kCliBin)) GTEST_SKIP() << "rlwb not built";
  std::string out = path("out.txt"), csv = path("summary.csv"), exported = path("export.jsonl");
  std::string cmd = std::string(rlwb::testing::kCliBin) + " runs compare " + std::to_string(a_) + " " +
                    std::to_string(b_) + " --metrics critic/score/mean --csv " + csv + " --db " + db_ +
                    " > " + out + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_bytes(out);
  std::string text = read_bytes(out);
  EXPECT_NE(text.find("lr-small"), std::string::npos);
  EXPECT_NE(text.find("critic/score/mean"), std::string::npos);
  EXPECT_EQ(text.find("actor/pg_loss"), std::string::npos);  // only the metric asked for
  EXPECT_EQ(text.find("layout.gen.x"), std::string::npos) << text;
  cmd = std::string(rlwb::testing::kCliBin) + " runs compare " + std::to_string(a_) + " " +
        std::to_string(b_) + " --layout-keys --db " + db_ + " > " + out + " 2>&1";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << read_bytes(out);
  text = read_bytes(out);
  EXPECT_NE(text.find("layout.gen.x  100"), std::string::npos) << text;
  EXPECT_EQ(text.find("layout.gen.y"), std::string::npos) << text;  // the same in both runs
  // Without --metrics the reward (a headline metric) is listed before the loss.
  EXPECT_LT(text.find("critic/score/mean  "), text.find("actor/pg_loss  ")) << text;
  std::string summary = read_bytes(csv);
  EXPECT_EQ(std::count(summary.begin(), summary.end(), '\n'), 3);
  cmd = std::string(rlwb::testing::kCliBin) + " runs export " + std::to_string(b_) +
        " --format jsonl --out " + exported + " --db " + db_;
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  std::string lines = read_bytes(exported);
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 5);
  cmd = std::string(rlwb::testing::kCliBin) + " runs compare " + std::to_string(a_) + " --db " + db_ + " > " +
        out + " 2>&1";
  EXPECT_NE(std::system(cmd.c_str()), 0);  // one run is not a comparison
  EXPECT_NE(read_bytes(out).find("at least two"), std::string::npos);
}

}  // namespace
}  // namespace rlwb::core
