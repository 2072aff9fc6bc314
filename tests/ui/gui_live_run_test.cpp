// A real run started from the GUI, as a person would: open the demo graph,
// type trainer.steps=2 in the launch screen (and a slower squarer, so the
// run is seen while it runs), start it, watch the dashboard fill, and see it
// finish. Needs rlwb and rlwb-worker built.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/tracking/tracking.h"
#include "tests/ui/ui_test_support.h"
#include "tests/test_paths.h"

namespace rlwb::ui {
namespace {

using test::count_color;
using test::item_rect;
using test::read_bytes;
using test::run_gui;
using test::write_bytes;

// Each test launches the demo experiment from a copy in its own directory.
class GuiLiveRunTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    if (!std::filesystem::exists(rlwb::testing::kCliBin) ||
        !std::filesystem::exists(rlwb::testing::kWorkerBin))
      GTEST_SKIP() << "rlwb / rlwb-worker not built";
    file = path("demo.yaml");
    db = path("runs/rlwb.db");
    write_bytes(file, read_bytes(test::source_path("experiments/demo.yaml")));
  }
  std::string file, db;  // the experiment copy and the tracking DB the GUI's runs write
};

TEST_F(GuiLiveRunTest, StartATinyRunFromTheLaunchScreenAndSeeItsDashboardFill) {
  const std::string script = R"(
click @tab/Launch
wait @launch/overrides 20000
click @launch/overrides
text trainer.steps=2 models.squarer.config.sleep_ms=1500
click @"button/Start run"
wait @launch/run 60000
click @"button/Open dashboard"
wait @dashboard/status/running 10000
wait @plot/global_total/mean 20000
screenshot running.png
wait @dashboard/status/finished 120000
wait @plot/global_total/mean 10000
sleep 600
frames 5
)";
  auto r = run_gui(dir_, {"--db", db, "--open", file, "--cli", rlwb::testing::kCliBin}, script);
  ASSERT_EQ(r.exit_code, 0) << r.log << "\ncontroller output:\n"
                            << read_bytes(path("runs/logs/gui/controller-1.log"));
  EXPECT_EQ(r.state["launch"]["exit_code"], 0) << r.state["launch"].dump();
  EXPECT_EQ(r.state["launch"]["argv"][3], "trainer.steps=2");
  const int64_t run = r.state["launch"]["run_id"];
  ASSERT_GT(run, 0);
  EXPECT_EQ(r.state["dashboard"]["run"], run);
  EXPECT_EQ(r.state["dashboard"]["status"], "finished");
  // Two steps: every metric has two points, as the DB does.
  core::TrackingReader reader(db);
  ASSERT_FALSE(r.state["dashboard"]["metrics"].empty());
  for (auto& [key, points] : r.state["dashboard"]["metrics"].items()) {
    EXPECT_EQ(points, 2) << key;
    EXPECT_EQ(reader.metrics(run, 0, key).size(), 2u) << key;
  }
  // The plots show the series (run colour 0, blue). global_total/mean is the
  // demo graph's own metric, among the first plotted whatever timings the
  // controller adds.
  auto plot = item_rect(r.state, "plot/global_total/mean");
  ASSERT_EQ(plot.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x1F77B4, 30), 20);
  // While it ran, the dashboard was already up (status 'running').
  EXPECT_TRUE(std::filesystem::exists(path("running.png")));
}

// From a past run back to a new one: open the run's experiment in the
// editor, launch it, and the new run records where it came from; the runs
// table compares the two side by side.
TEST_F(GuiLiveRunTest, ARunReopenedAndLaunchedAgainRecordsItsOriginAndComparesWithIt) {
  int64_t origin = 0;
  {
    core::TrackingWriter w(db);
    origin = w.start_run("origin", file, read_bytes(file), "demo", 1, {{"trainer", {{"steps", 3}}}});
    w.end_run(origin, "finished");
  }
  const std::string row = "runs/row/" + std::to_string(origin);
  const std::string script = "wait @" + row + " 20000\nclick @" + row + R"(
click @"button/Open in editor"
frames 2
click @tab/Launch
wait @launch/overrides 20000
click @launch/overrides
text trainer.steps=1
click @"button/Start run"
wait @launch/run 60000
wait @launch/run/finished 120000
click @tab/Runs
wait @runs/row/2 20000
click @runs/row/2
frames 2
screenshot relaunched.png
click @"button/Compare with origin"
frames 3
)";
  auto r = run_gui(dir_, {"--db", db, "--screen", "runs", "--cli", rlwb::testing::kCliBin}, script);
  ASSERT_EQ(r.exit_code, 0) << r.log << "\ncontroller output:\n"
                            << read_bytes(path("runs/logs/gui/controller-1.log"));
  EXPECT_EQ(r.state["editor"]["origin_run"], origin);
  const auto& argv = r.state["launch"]["argv"];
  auto at = std::find(argv.begin(), argv.end(), "--from-run");
  ASSERT_NE(at, argv.end()) << argv.dump();
  EXPECT_EQ(*(at + 1), std::to_string(origin));
  const int64_t relaunched = r.state["launch"]["run_id"];
  ASSERT_GT(relaunched, origin);
  core::TrackingReader reader(db);
  EXPECT_EQ(reader.run(relaunched)->from_run, origin);
  EXPECT_EQ(reader.run(relaunched)->status, "finished");
  EXPECT_EQ(r.state["screen"], "compare");
  EXPECT_EQ(r.state["compare"]["runs"], nlohmann::json({origin, relaunched}));
}

TEST_F(GuiLiveRunTest, TheLaunchScreenListsTheWorkersAndStopEndsTheRunAsInterrupted) {
  // 50 slow steps: far more than the test waits, so only Stop can end it. Stop
  // comes once a step is logged (a stop while workers start records 'failed').
  const std::string script = R"(
click @tab/Launch
wait @launch/overrides 20000
click @launch/overrides
text trainer.steps=50 models.squarer.config.sleep_ms=300
click @"button/Start run"
wait @launch/run/running 60000
wait @launch/worker/left/0 10000
wait @launch/worker/left/1 10000
wait @launch/worker/right/0 10000
wait @launch/run/stepping 30000
screenshot running.png
click @button/Stop
wait @launch/run/interrupted 30000
wait @launch/controller/ended 30000
frames 3
)";
  auto r = run_gui(dir_, {"--db", db, "--open", file, "--cli", rlwb::testing::kCliBin}, script);
  ASSERT_EQ(r.exit_code, 0) << r.log << "\ncontroller output:\n"
                            << read_bytes(path("runs/logs/gui/controller-1.log"));
  const int64_t run = r.state["launch"]["run_id"];
  ASSERT_GT(run, 0);
  EXPECT_FALSE(r.state["launch"]["active"]);
  core::TrackingReader reader(db);
  ASSERT_TRUE(reader.run(run));
  EXPECT_EQ(reader.run(run)->status, "interrupted");
  EXPECT_LT(reader.run(run)->last_step, 50);
  // The controller's output is tailed on the screen: it says the run was interrupted.
  EXPECT_NE(read_bytes(path("runs/logs/gui/controller-1.log")).find("interrupted"), std::string::npos);
}

}  // namespace
}  // namespace rlwb::ui
