// The tracking screens driven under xvfb-run: the runs table, selecting two
// runs and comparing them (diff table, overlaid plots, summary), the
// dashboard of a failed run, rename/tag/delete with confirmation, a
// database that is missing; the headline metrics as the first plots and the
// editor's layout keys out of the diff until asked for.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <thread>

#include "core/tracking/tracking.h"
#include "tests/ui/ui_test_support.h"
#include "tests/test_paths.h"

namespace rlwb::ui {
namespace {

using test::count_color;
using test::item_rect;
using test::run_gui;

class GuiRunsTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    db_ = path("rlwb.db");
    core::TrackingWriter w(db_);
    const double lrs[] = {0.1, 0.2, 0.1};
    for (int r = 0; r < 3; ++r) {
      ids_[r] = w.start_run("run-" + std::to_string(r), "experiments/demo.yaml", "", "grpo", r,
                            {{"trainer", {{"lr", lrs[r]}, {"steps", 200}}}, {"seed", r}});
      for (int step = 0; step < 200; ++step) {
        w.log_metric(ids_[r], "critic/score/mean", step,
                     (r + 1) * 0.1 * std::log1p(step) + 0.05 * std::sin(step));
        w.log_metric(ids_[r], "actor/pg_loss", step, 1.0 / (1 + step * (r + 1) * 0.05));
      }
      w.log_event(ids_[r], "info", "controller", "started");
      w.log_sample(ids_[r], 199, "What is 2+3?", "The answer is 5.", 1.0, {{"verdict", "ok"}});
    }
    w.end_run(ids_[0], "finished");
    w.end_run(ids_[1], "finished");
    w.end_run(ids_[2], "failed", "worker left/1 died: killed by signal 9");
  }
  std::string db_;
  int64_t ids_[3] = {0, 0, 0};
};

TEST_F(GuiRunsTest, TheRunsTableListsEveryRunNewestFirst) {
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs"}, "wait @runs/row/1 20000\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["runs"]["visible"], nlohmann::json({ids_[2], ids_[1], ids_[0]}));
  EXPECT_EQ(r.state["runs"]["info"][std::to_string(ids_[2])]["status"], "failed");
  auto row = item_rect(r.state, "runs/row/" + std::to_string(ids_[2]));
  ASSERT_EQ(row.size(), 4u);
  // 'failed' is drawn in red on its row.
  EXPECT_GT(count_color(r.screenshot, 0, row[1], 1600, row[3], 0xFF7366, 30), 10);
}

// "Open in editor" on a run opens its experiment as it ran -- the text the
// run stored, not the file on disk now -- marked as that run's, in a file
// beside the DB; opening it again reuses that file unless it was edited
// since (then a new one, the edited file kept). A run that stored no text
// says so.
TEST_F(GuiRunsTest, OpenInEditorShowsTheExperimentAsTheRunRanIt) {
  std::string text = test::read_bytes(test::source_path("experiments/demo.yaml"));
  ASSERT_NE(text.find("name: demo"), std::string::npos);
  text.replace(text.find("name: demo"), 10, "name: as-it-ran");
  int64_t id = 0;
  {
    core::TrackingWriter w(db_);
    id = w.start_run("with-text", "experiments/demo.yaml", text, "demo", 1, {});
    w.end_run(id, "finished");
  }
  const std::string row = "runs/row/" + std::to_string(id);
  const std::string open =
      "wait @" + row + " 20000\nclick @" + row + "\nclick @\"button/Open in editor\"\nframes 3\n";
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs", "--cli", "/nonexistent/rlwb"},
                   open + "screenshot opened.png\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["screen"], "editor");
  const std::string reopened = (dir_ / "reopened" / ("run-" + std::to_string(id) + ".yaml")).string();
  EXPECT_EQ(r.state["editor"]["file"], reopened);
  EXPECT_EQ(r.state["editor"]["origin_run"], id);
  EXPECT_TRUE(r.state["editor"]["loaded"]);
  EXPECT_EQ(r.state["editor"]["nodes"].size(), 5u);
  EXPECT_EQ(test::read_bytes(reopened), text);
  EXPECT_EQ(item_rect(r.state, "editor/file").size(), 4u);

  // Again: the same file. Edited since: a new one, the edited file kept.
  auto again = run_gui(dir_, {"--db", db_, "--screen", "runs", "--cli", "/nonexistent/rlwb"}, open, "again");
  EXPECT_EQ(again.state["editor"]["file"], reopened);
  test::write_bytes(reopened, text + "# my edit\n");
  auto edited =
      run_gui(dir_, {"--db", db_, "--screen", "runs", "--cli", "/nonexistent/rlwb"}, open, "edited");
  const std::string second = (dir_ / "reopened" / ("run-" + std::to_string(id) + "-2.yaml")).string();
  EXPECT_EQ(edited.state["editor"]["file"], second);
  EXPECT_EQ(test::read_bytes(second), text);
  EXPECT_EQ(test::read_bytes(reopened), text + "# my edit\n");

  // A run without stored text.
  const std::string bare = "runs/row/" + std::to_string(ids_[0]);
  auto none = run_gui(
      dir_, {"--db", db_, "--screen", "runs", "--cli", "/nonexistent/rlwb"},
      "wait @" + bare + " 20000\nclick @" + bare + "\nclick @\"button/Open in editor\"\nframes 3\n", "none");
  EXPECT_NE(none.state["editor"]["status"].get<std::string>().find("stored no experiment text"),
            std::string::npos)
      << none.state["editor"]["status"];
}

// A run relaunched from another says so on its row, and "Compare with
// origin" compares the two; a run with no origin has no such button.
TEST_F(GuiRunsTest, ARelaunchedRunShowsItsOriginAndComparesWithIt) {
  int64_t again = 0;
  {
    core::TrackingWriter w(db_);
    again = w.start_run("again", "reopened/run-1.yaml", "", "grpo", 1, {{"trainer", {{"lr", 0.3}}}}, ids_[0]);
    w.end_run(again, "finished");
  }
  const std::string row = "runs/row/" + std::to_string(again);
  auto shown =
      run_gui(dir_, {"--db", db_, "--screen", "runs"},
              "wait @" + row + " 20000\nclick @" + row + "\nframes 2\nscreenshot from.png\n", "shown");
  ASSERT_EQ(shown.exit_code, 0) << shown.log;
  EXPECT_EQ(item_rect(shown.state, "runs/from/" + std::to_string(again)).size(), 4u);
  EXPECT_EQ(item_rect(shown.state, "runs/from/" + std::to_string(ids_[0])).size(), 0u);
  EXPECT_EQ(item_rect(shown.state, "button/Compare with origin").size(), 4u);
  auto compared = run_gui(dir_, {"--db", db_, "--screen", "runs"},
                          "wait @" + row + " 20000\nclick @" + row +
                              "\nframes 2\nclick @\"button/Compare with origin\"\nframes 3\n",
                          "compared");
  ASSERT_EQ(compared.exit_code, 0) << compared.log;
  EXPECT_EQ(compared.state["screen"], "compare");
  EXPECT_EQ(compared.state["compare"]["runs"], nlohmann::json({ids_[0], again}));
  const std::string plain = "runs/row/" + std::to_string(ids_[1]);
  auto none = run_gui(dir_, {"--db", db_, "--screen", "runs"},
                      "wait @" + plain + " 20000\nclick @" + plain + "\nframes 2\n", "none");
  EXPECT_EQ(item_rect(none.state, "button/Compare with origin").size(), 0u);
}

TEST_F(GuiRunsTest, ClickingAHeaderSortsByThatColumnAndAgainReversesIt) {
  const std::string click = "click @\"runs/header/best score\"\nframes 2\n";
  const std::string wait = "wait @runs/row/" + std::to_string(ids_[0]) + " 20000\n";
  auto once = run_gui(dir_, {"--db", db_, "--screen", "runs"}, wait + click, "once");
  ASSERT_EQ(once.exit_code, 0) << once.log;
  // Best scores grow with the run index: ascending puts run 0 first.
  EXPECT_EQ(once.state["runs"]["visible"], nlohmann::json({ids_[0], ids_[1], ids_[2]}));
  auto twice = run_gui(dir_, {"--db", db_, "--screen", "runs"}, wait + click + click, "twice");
  ASSERT_EQ(twice.exit_code, 0) << twice.log;
  EXPECT_EQ(twice.state["runs"]["visible"], nlohmann::json({ids_[2], ids_[1], ids_[0]}));
  // The rows are drawn in that order, top to bottom.
  EXPECT_LT(item_rect(twice.state, "runs/row/" + std::to_string(ids_[2]))[1],
            item_rect(twice.state, "runs/row/" + std::to_string(ids_[0]))[1]);
}

TEST_F(GuiRunsTest, FilterByTextAndByParam) {
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs"},
                   "wait @runs/row/1 20000\nclick @runs/param_filter\ntext trainer.lr=0.1\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["runs"]["visible"], nlohmann::json({ids_[2], ids_[0]}));
}

TEST_F(GuiRunsTest, SelectTwoRunsCompareThemAndReadTheDiffTable) {
  const std::string script = "wait @runs/row/" + std::to_string(ids_[0]) + " 20000\nclick @runs/row/" +
                             std::to_string(ids_[0]) + "\nclick @runs/row/" + std::to_string(ids_[1]) +
                             " ctrl\nclick @button/Compare\nwait @plot/critic/score/mean 10000\n"
                             "click @\"button/Export CSV\"\nframes 5\n";
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs"}, script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["screen"], "compare");
  EXPECT_EQ(r.state["compare"]["runs"], nlohmann::json({ids_[0], ids_[1]}));
  // Only differing keys: trainer.lr and seed; trainer.steps is the same.
  std::map<std::string, nlohmann::json> diff;
  for (const auto& row : r.state["compare"]["diff"]) diff[row["key"]] = row["values"];
  ASSERT_EQ(diff.size(), 2u) << r.state["compare"]["diff"].dump();
  EXPECT_EQ(diff["trainer.lr"], nlohmann::json({"0.1", "0.2"}));
  EXPECT_TRUE(diff.count("seed"));
  EXPECT_EQ(item_rect(r.state, "diff/trainer.steps").size(), 0u);
  EXPECT_EQ(item_rect(r.state, "diff/trainer.lr").size(), 4u);
  // Summary: one row per metric and run, with the values the data has.
  ASSERT_EQ(r.state["compare"]["summary"].size(), 4u);
  // Exported: a header and one line per metric and run.
  std::string csv = test::read_bytes(path("compare_summary.csv"));
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 5) << csv;
  EXPECT_NE(csv.find("run_id,run_name,metric"), std::string::npos);
  // The score plot overlays both runs in their colours (blue, orange).
  auto plot = item_rect(r.state, "plot/critic/score/mean");
  ASSERT_EQ(plot.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x1F77B4, 30), 50);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0xFF7F0E, 30), 50);
}

TEST_F(GuiRunsTest, CompareFromTheCommandLineWithAllKeysAndGroupedRuns) {
  const std::string script =
      "wait @compare/all_keys 20000\nclick @compare/all_keys\nclick @compare/group_by\n"
      "wait @group_by/trainer.lr 20000\nclick @group_by/trainer.lr\nwait @legend/group/0.1 "
      "3000\nwait @plot/critic/score/mean 20000\nframes 3\n";  // the metrics load after the legend
  auto r = run_gui(dir_,
                   {"--db", db_, "--compare",
                    std::to_string(ids_[0]) + "," + std::to_string(ids_[1]) + "," + std::to_string(ids_[2])},
                   script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["compare"]["diff"].size(), 3u);  // all keys: seed, trainer.lr, trainer.steps
  EXPECT_EQ(r.state["compare"]["group_by"], "trainer.lr");
  // Two groups: lr=0.1 (runs 1 and 3: a blue band, at 0.18 over the plot's
  // background) and lr=0.2 (one run: an orange line). The score's mean line
  // of lr=0.1 lies under the orange one (their scores average to the same).
  auto plot = item_rect(r.state, "plot/critic/score/mean");
  ASSERT_EQ(plot.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x132331, 6), 2000);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0xFF7F0E, 30), 50);
}

TEST_F(GuiRunsTest, FramesModeShootsTheCompareViewOnceItsDataHasArrived) {
  // No script: `--frames 1` alone must not shoot a screen that is still loading.
  auto r = run_gui(dir_, {"--db", db_, "--compare", std::to_string(ids_[0]) + "," + std::to_string(ids_[1]),
                          "--frames", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["compare"]["summary"].size(), 4u);
  auto plot = item_rect(r.state, "plot/critic/score/mean");
  ASSERT_EQ(plot.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x1F77B4, 30), 50);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0xFF7F0E, 30), 50);
}

TEST_F(GuiRunsTest, PlotsShowValuesUnderThePointerZoomTowardItAndFitAgainOnDoubleClick) {
  const std::string plot = "plot/critic/score/mean";
  const std::vector<std::string> args = {"--db", db_, "--run", std::to_string(ids_[0])};
  const std::string hover =
      "wait @" + plot + " 10000\nframes 2\nmove @" + plot + "\nwait @" + plot + "/hover 10000\n";
  auto hovered = run_gui(dir_, args, hover + "frames 2\n", "hovered");
  ASSERT_EQ(hovered.exit_code, 0) << hovered.log;
  // The tooltip's line under "step N" names the run in its colour (blue).
  auto tip = item_rect(hovered.state, plot + "/hover");
  ASSERT_EQ(tip.size(), 4u);
  EXPECT_GT(count_color(hovered.screenshot, tip[0], tip[3], tip[0] + 70, tip[3] + 20, 0x1F77B4, 40), 10);
  // Three wheel notches zoom x toward the pointer: a narrower range that still holds it.
  const std::string zoom = hover + "scroll @" + plot + "~100,0 3\nframes 2\n";
  auto zoomed = run_gui(dir_, args, zoom, "zoomed");
  ASSERT_EQ(zoomed.exit_code, 0) << zoomed.log;
  const auto& view = zoomed.state["dashboard"]["views"]["critic/score/mean"];
  EXPECT_FALSE(view["auto_fit"].get<bool>());
  const double x0 = view["x0"], x1 = view["x1"];
  EXPECT_LT(x1 - x0, 199 * 0.7);
  EXPECT_GT(x0, 0.0);
  EXPECT_LT(x1, 199.0);
  // A double-click returns to auto-fit: the whole series again.
  auto fitted = run_gui(dir_, args, zoom + "dclick @" + plot + "\nframes 2\n", "fitted");
  ASSERT_EQ(fitted.exit_code, 0) << fitted.log;
  const auto& fit = fitted.state["dashboard"]["views"]["critic/score/mean"];
  EXPECT_TRUE(fit["auto_fit"].get<bool>());
  EXPECT_DOUBLE_EQ(fit["x0"].get<double>(), 0.0);
  EXPECT_DOUBLE_EQ(fit["x1"].get<double>(), 199.0);
}

TEST_F(GuiRunsTest, PlotLinesAreRedrawnOnlyWhenTheViewChanges) {
  // The series of a plot live in a cached texture (layer_cache.h): still
  // frames reuse it, a zoom redraws it, and either way the lines are there.
  const std::string plot = "plot/critic/score/mean";
  const std::vector<std::string> args = {"--db", db_, "--compare",
                                         std::to_string(ids_[0]) + "," + std::to_string(ids_[1])};
  const std::string settle = "wait @" + plot + " 10000\nframes 3\n";
  auto frames_of = [&](const std::string& tag) {
    return nlohmann::json::parse(test::read_bytes(path(tag + "-times.json")));
  };
  auto still_args = args;
  still_args.insert(still_args.end(), {"--frame-times", path("still-times.json")});
  auto still = run_gui(dir_, still_args, settle + "frames 5\n", "still");
  ASSERT_EQ(still.exit_code, 0) << still.log;
  auto times = frames_of("still");
  ASSERT_GE(times.size(), 5u);
  for (size_t i = times.size() - 5; i < times.size(); ++i)
    EXPECT_EQ(times[i]["layers_redrawn"].get<int>(), 0) << "frame " << i << " of a still view";
  EXPECT_GT(still.state["layers"]["reused"].get<int>(), 0);
  auto rect = item_rect(still.state, plot);
  ASSERT_EQ(rect.size(), 4u);
  EXPECT_GT(count_color(still.screenshot, rect[0], rect[1], rect[2], rect[3], 0x1F77B4, 30), 50);

  auto zoom_args = args;
  zoom_args.insert(zoom_args.end(), {"--frame-times", path("zoom-times.json")});
  auto zoomed = run_gui(dir_, zoom_args, settle + "scroll @" + plot + " 3\nframes 3\n", "zoom");
  ASSERT_EQ(zoomed.exit_code, 0) << zoomed.log;
  times = frames_of("zoom");
  int redrawn_after_settling = 0;
  for (size_t i = times.size() - 6; i < times.size(); ++i)
    redrawn_after_settling += times[i]["layers_redrawn"].get<int>();
  EXPECT_GE(redrawn_after_settling, 1) << "the zoomed plot was not redrawn";
  rect = item_rect(zoomed.state, plot);
  ASSERT_EQ(rect.size(), 4u);
  EXPECT_GT(count_color(zoomed.screenshot, rect[0], rect[1], rect[2], rect[3], 0x1F77B4, 30), 50);
  // With two runs the raw series are drawn faintly under the smoothed
  // ones: blue at a quarter over the plot's background (16, 17, 20), as
  // GL blending would give it.
  EXPECT_GT(count_color(zoomed.screenshot, rect[0], rect[1], rect[2], rect[3], 0x142A3C, 6), 20);
  // The right way up: the score rises (log1p of the step), so the blue
  // line sits higher (smaller y) left of the middle (the pointer's
  // tooltip is right of it) than at the left edge.
  auto mean_blue_row = [&](const Image& image, int x0, int x1) {
    double rows = 0;
    int n = 0;
    for (int y = rect[1]; y < rect[3]; ++y)
      if (count_color(image, x0, y, x1, y + 1, 0x1F77B4, 30) > 0) rows += y, ++n;
    return n ? rows / n : -1.0;
  };
  for (const Image* shot : {&still.screenshot, &zoomed.screenshot}) {
    const int quarter = (rect[2] - rect[0]) / 4;
    const int middle = (rect[0] + rect[2]) / 2;
    const double left = mean_blue_row(*shot, rect[0] + 60, rect[0] + 60 + quarter / 2),
                 right = mean_blue_row(*shot, middle - quarter / 2, middle - 10);
    ASSERT_GT(left, 0);
    ASSERT_GT(right, 0);
    EXPECT_LT(right, left - 5) << (shot == &still.screenshot ? "still" : "zoomed");
  }
  // The grid is drawn with the lines.
  EXPECT_GT(count_color(zoomed.screenshot, rect[0], rect[1], rect[2], rect[3], 0x3C4048, 3), 100);
}

TEST_F(GuiRunsTest, TheDashboardOfAFailedRunShowsItsPlotsAndItsError) {
  auto r = run_gui(dir_, {"--db", db_, "--run", std::to_string(ids_[2])},
                   "wait @plot/critic/score/mean 10000\nwait @dashboard/error 20000\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["dashboard"]["metrics"]["critic/score/mean"], 200);
  EXPECT_EQ(r.state["dashboard"]["status"], "failed");
  auto plot = item_rect(r.state, "plot/critic/score/mean");
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x1F77B4, 30), 50);
  auto error = item_rect(r.state, "dashboard/error");
  ASSERT_EQ(error.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, error[0], error[1], error[2], error[3], 0xFF7366, 30), 30);
}

TEST_F(GuiRunsTest, TheSamplesViewAndLogY) {
  const std::string script =
      "wait @plot/actor/pg_loss 10000\nclick @tab/Samples\nwait @sample/0 20000\nscreenshot "
      "samples.png\n"
      "click @tab/Plots\nwait @plot/actor/pg_loss 20000\nclick @settings/log_y\nframes 3\n";
  auto r = run_gui(dir_, {"--db", db_, "--run", std::to_string(ids_[0])}, script);
  // The script waited for the sample of step 199 to be listed (it fails otherwise).
  ASSERT_EQ(r.exit_code, 0) << r.log;
  // With log y the loss (1 .. 0.005) still draws.
  auto plot = item_rect(r.state, "plot/actor/pg_loss");
  ASSERT_EQ(plot.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, plot[0], plot[1], plot[2], plot[3], 0x1F77B4, 30), 50);
}

TEST_F(GuiRunsTest, RenameTagAndDeleteWithConfirmation) {
  const std::string id0 = std::to_string(ids_[0]), id1 = std::to_string(ids_[1]);
  const std::string script =
      "wait @runs/row/" + id0 +
      " 20000\n"
      "click @runs/row/" +
      id0 +
      "\nclick @button/Rename\nwait @runs/rename_text 20000\n"
      "key ctrl+a\ntext baseline\nclick @button/OK\nframes 3\n"
      "click @button/Tag\nwait @runs/tag_text 20000\ntext keep=yes\nclick @button/OK\nframes 3\n"
      "click @runs/row/" +
      id1 +
      "\nclick @button/Delete\nwait @\"button/Delete runs\" 10000\n"
      "screenshot confirm.png\nclick @\"button/Delete runs\"\nsleep 600\nframes 3\n";
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs"}, script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  core::TrackingReader reader(db_);
  ASSERT_TRUE(reader.run(ids_[0]));
  EXPECT_EQ(reader.run(ids_[0])->name, "baseline");
  EXPECT_EQ(reader.tags(ids_[0]), (std::vector<std::pair<std::string, std::string>>{{"keep", "yes"}}));
  EXPECT_FALSE(reader.run(ids_[1]).has_value());
  EXPECT_TRUE(reader.run(ids_[2]).has_value());  // nothing else is lost
  EXPECT_EQ(reader.metrics(ids_[2]).size(), 400u);
  EXPECT_EQ(r.state["runs"]["visible"], nlohmann::json({ids_[2], ids_[0]}));
}

TEST_F(GuiRunsTest, AMissingDatabaseShowsAMessage) {
  auto r = run_gui(dir_, {"--db", path("nowhere/rlwb.db"), "--screen", "runs"}, "sleep 400\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_NE(r.state["runs"]["error"].get<std::string>().find("no tracking database"), std::string::npos);
}

TEST_F(GuiRunsTest, ADatabaseThatIsMissingAndThenAppearsIsReadOnTheRetry) {
  const std::string later = path("later/rlwb.db");
  const std::string script =
      "wait @runs/db_error 20000\nscreenshot missing.png\nwait @runs/row/1 15000\nframes 3\n";
  // The database appears while the GUI runs (as when a first run starts),
  // once the GUI has shown that it is missing (or when the GUI has exited:
  // then the script has failed; 60 s at most).
  std::atomic<bool> gui_done{false};
  std::thread writer([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(path("missing.png")) && !gui_done &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::filesystem::create_directories(path("later"));
    core::TrackingWriter w(later);
    w.end_run(w.start_run("late", "demo.yaml", "", "demo", 0, nlohmann::json::object()), "finished");
  });
  auto r = run_gui(dir_, {"--db", later, "--screen", "runs"}, script);
  gui_done = true;
  writer.join();
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["runs"]["error"], "");
  EXPECT_EQ(r.state["runs"]["visible"], nlohmann::json({1}));
  // While it was missing, the message was drawn (orange) where the status line is.
  Image missing = read_png(path("missing.png"));
  auto status = item_rect(r.state, "runs/status");
  ASSERT_EQ(status.size(), 4u);
  EXPECT_GT(count_color(missing, status[0], status[1], status[2], status[3], 0xFFBF4C, 30), 30);
}

TEST_F(GuiRunsTest, ALockedDatabaseShowsAMessageAndIsReadOnceTheLockGoes) {
  // Another connection holds the database exclusively, past the reader's 5 s
  // busy timeout, until the GUI has said so.
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder,
                         "PRAGMA locking_mode=EXCLUSIVE; BEGIN EXCLUSIVE;"
                         "UPDATE runs SET name = name;",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  // It lets go once the GUI has shown the error (the script's screenshot
  // appears), or when the GUI has exited without (the script failed; 60 s at most).
  std::atomic<bool> gui_done{false};
  std::thread release([&] {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!std::filesystem::exists(path("locked.png")) && !gui_done &&
           std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    sqlite3_exec(holder, "COMMIT;", nullptr, nullptr, nullptr);
    sqlite3_close(holder);
  });
  const std::string script = "wait @runs/db_error 20000\nscreenshot locked.png\nwait @runs/row/" +
                             std::to_string(ids_[0]) + " 20000\nframes 3\n";
  auto r = run_gui(dir_, {"--db", db_, "--screen", "runs"}, script);
  gui_done = true;
  release.join();
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["runs"]["error"], "");
  EXPECT_EQ(r.state["runs"]["visible"].size(), 3u);
  Image locked = read_png(path("locked.png"));
  auto status = item_rect(r.state, "runs/status");
  ASSERT_EQ(status.size(), 4u);
  EXPECT_GT(count_color(locked, status[0], status[1], status[2], status[3], 0xFFBF4C, 30), 30);
}

TEST_F(GuiRunsTest, BadCommandLineValuesAreRefusedWithAMessage) {
  auto r = run_gui(dir_, {"--db", db_, "--compare", "1,x"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.log.find("got 'x'"), std::string::npos) << r.log;
  EXPECT_FALSE(std::filesystem::exists(path("gui.png"))) << "nothing is drawn";
  r = run_gui(dir_, {"--db", db_, "--run", "abc"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.log.find("--run wants a whole number, got 'abc'"), std::string::npos) << r.log;
}

TEST_F(GuiRunsTest, TheDashboardSaysWhenItsDatabaseIsMissing) {
  auto r = run_gui(dir_, {"--db", path("gone/rlwb.db"), "--run", "1"}, "wait @db_error 20000\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  auto error = item_rect(r.state, "db_error");
  ASSERT_EQ(error.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, error[0], error[1], error[2], error[3], 0xFFBF4C, 30), 30);
}

// Runs as a user has them: the headline metrics among others whose names
// sort before them, and graph files saved from the editor, so the node
// positions under layout: differ from run to run.
class GuiPpoRunsTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    db_ = path("rlwb.db");
    core::TrackingWriter w(db_);
    for (int r = 0; r < 2; ++r) {
      const nlohmann::json layout = {{"gen", {{"x", 100 + 50 * r}, {"y", 40}}},
                                     {"ref", {{"x", 300}, {"y", 40 + 10 * r}}}};
      ids_[r] = w.start_run("run-" + std::to_string(r), "experiments/ppo.yaml", "", "ppo", r,
                            {{"trainer", {{"lr", 0.1 * (r + 1)}, {"steps", 100}}}, {"layout", layout}});
      for (int step = 0; step < 100; ++step) {
        for (const char* key : {"actor/entropy", "actor/grad_norm", "actor/kl_loss", "actor/pg_loss",
                                "actor/ppo_kl", "critic/score/mean", "perf/throughput"})
          w.log_metric(ids_[r], key, step, (r + 1) * std::log1p(step) + 0.1 * std::sin(step));
        if (step % 10 == 0) w.log_metric(ids_[r], "val/score/mean", step, (r + 1) * 0.01 * step);
      }
      w.end_run(ids_[r], "finished");
    }
  }
  std::vector<std::string> compare_args() const {
    return {"--db", db_, "--compare", std::to_string(ids_[0]) + "," + std::to_string(ids_[1])};
  }
  std::string db_;
  int64_t ids_[2] = {0, 0};
};

std::vector<std::string> diff_keys(const nlohmann::json& state) {
  std::vector<std::string> keys;
  for (const auto& row : state.at("compare").at("diff")) keys.push_back(row.at("key").get<std::string>());
  return keys;
}

TEST_F(GuiPpoRunsTest, TheCompareViewShowsNoLayoutKeysUntilTheCheckboxIsClicked) {
  const std::string settle = "wait @compare/loaded 20000\nwait @plot/critic/score/mean 10000\nframes 3\n";
  auto before = run_gui(dir_, compare_args(), settle, "before");
  ASSERT_EQ(before.exit_code, 0) << before.log;
  EXPECT_EQ(diff_keys(before.state), std::vector<std::string>{"trainer.lr"});
  EXPECT_EQ(before.state["compare"]["hidden_layout_keys"], 2);  // gen.x and ref.y differ
  EXPECT_EQ(item_rect(before.state, "diff/layout.gen.x").size(), 0u);
  ASSERT_EQ(item_rect(before.state, "compare/layout_keys").size(), 4u);

  auto after = run_gui(dir_, compare_args(), settle + "click @compare/layout_keys\nframes 3\n", "after");
  ASSERT_EQ(after.exit_code, 0) << after.log;
  EXPECT_TRUE(after.state["compare"]["layout_keys"].get<bool>());
  EXPECT_EQ(diff_keys(after.state), (std::vector<std::string>{"layout.gen.x", "layout.ref.y", "trainer.lr"}));
  EXPECT_EQ(after.state["compare"]["hidden_layout_keys"], 0);
  // The row is drawn, its key in the colour of a differing key.
  auto row = item_rect(after.state, "diff/layout.gen.x");
  ASSERT_EQ(row.size(), 4u);
  EXPECT_GT(count_color(after.screenshot, row[0], row[1], row[2], row[3], 0xFFCC66, 30), 20);
  // Clicked again, they are hidden again.
  auto again = run_gui(
      dir_, compare_args(),
      settle + "click @compare/layout_keys\nframes 2\nclick @compare/layout_keys\nframes 3\n", "again");
  ASSERT_EQ(again.exit_code, 0) << again.log;
  EXPECT_EQ(diff_keys(again.state), std::vector<std::string>{"trainer.lr"});
}

// The plot grid is two columns wide: the held-out score top left, the
// reward right of it, the KL below the score; then the rest by name.
void expect_headline_plots_first(const test::GuiResult& r, const std::string& view) {
  const std::vector<std::string> first = {"val/score/mean", "critic/score/mean", "actor/kl_loss",
                                          "actor/entropy"};
  const auto& shown = r.state.at(view).at("shown");
  ASSERT_GE(shown.size(), first.size()) << shown.dump();
  for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(shown[i], first[i]) << view << " plot " << i;
  auto score = item_rect(r.state, "plot/val/score/mean"),
       reward = item_rect(r.state, "plot/critic/score/mean"), kl = item_rect(r.state, "plot/actor/kl_loss");
  ASSERT_EQ(score.size(), 4u);
  ASSERT_EQ(reward.size(), 4u);
  ASSERT_EQ(kl.size(), 4u);
  EXPECT_EQ(reward[1], score[1]) << view;
  EXPECT_GT(reward[0], score[2] - 1) << view;
  EXPECT_EQ(kl[0], score[0]) << view;
  EXPECT_GT(kl[1], score[3] - 1) << view;
  // The metric list on the left has the same order.
  auto listed_first = item_rect(r.state, "metric/val/score/mean"),
       listed_later = item_rect(r.state, "metric/actor/entropy");
  ASSERT_EQ(listed_first.size(), 4u);
  ASSERT_EQ(listed_later.size(), 4u);
  EXPECT_LT(listed_first[1], listed_later[1]) << view;
  // And the held-out score's plot has its line (blue: the first run).
  EXPECT_GT(count_color(r.screenshot, score[0], score[1], score[2], score[3], 0x1F77B4, 30), 50) << view;
}

TEST_F(GuiPpoRunsTest, TheHeadlineMetricsAreTheFirstPlotsOnTheDashboardAndInTheCompareView) {
  auto dashboard = run_gui(dir_, {"--db", db_, "--run", std::to_string(ids_[0])},
                           "wait @plot/val/score/mean 10000\nframes 3\n", "dashboard");
  ASSERT_EQ(dashboard.exit_code, 0) << dashboard.log;
  expect_headline_plots_first(dashboard, "dashboard");

  auto compare =
      run_gui(dir_, compare_args(), "wait @compare/loaded 20000\nwait @plot/val/score/mean 10000\nframes 3\n",
              "compare");
  ASSERT_EQ(compare.exit_code, 0) << compare.log;
  expect_headline_plots_first(compare, "compare");
  // The summary table lists the metrics in the same order, top to bottom.
  const auto& summary = compare.state["compare"]["summary"];
  ASSERT_GE(summary.size(), 6u);
  EXPECT_EQ(summary[0]["metric"], "val/score/mean");
  EXPECT_EQ(summary[2]["metric"], "critic/score/mean");
  EXPECT_EQ(summary[4]["metric"], "actor/kl_loss");
  const std::string run = "/" + std::to_string(ids_[0]);
  std::vector<int> rows;
  for (const char* metric : {"val/score/mean", "critic/score/mean", "actor/kl_loss", "actor/entropy"}) {
    auto cell = item_rect(compare.state, std::string("summary/") + metric + run);
    ASSERT_EQ(cell.size(), 4u) << metric;
    rows.push_back(cell[1]);
  }
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()) && rows.front() < rows.back())
      << ::testing::PrintToString(rows);
}

}  // namespace
}  // namespace rlwb::ui
