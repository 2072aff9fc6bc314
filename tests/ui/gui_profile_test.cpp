// The Profile screen driven under xvfb-run as a person would use it, on
// real profiled runs of experiments/grpo.yaml made in the set-up (a few
// seconds each): hover a frame for its metrics, zoom in and out, switch
// node and worker, search, the step timeline with its critical path and
// idle pools, a diff against a second profiled run, the findings beside
// it; a run without a profile says why, as the CLI does; the Runs screen
// opens a run's profile. Needs rlwb and rlwb-worker built.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "core/profile/context_paths.h"
#include "core/profile/profile_diff.h"
#include "core/profile/profile_store.h"
#include "core/tracking/tracking.h"
#include "tests/core/profile/profile_fixtures.h"
#include "tests/test_paths.h"
#include "tests/ui/ui_test_support.h"
#include "ui/profile/icicle_layout.h"

namespace rlwb::ui {
namespace {

using test::count_color;
using test::item_rect;
using test::read_bytes;
using test::run_gui;
namespace profile = core::profile;

class GuiProfileTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    if (!std::filesystem::exists(rlwb::testing::kCliBin) ||
        !std::filesystem::exists(rlwb::testing::kWorkerBin))
      GTEST_SKIP() << "rlwb / rlwb-worker not built";
    db = path("rlwb.db");
  }

  // A real, short, profiled GRPO run; `extra` overrides (a second pool, ...).
  // Returns its id.
  int64_t profiled_run(const std::string& extra) {
    const std::string log = path("run.log");
    const std::string cmd = "cd '" + dir_.string() + "' && '" + rlwb::testing::kCliBin + "' run '" +
                            test::source_path("experiments/grpo.yaml") +
                            "' trainer.steps=3 trainer.warm_start.steps=1 trainer.eval.batch_size=16 "
                            "'trainer.save=[]' task.batch_size=8 models.actor.config.ppo.mini_batch_size=64 "
                            "profile.enabled=true profile.every=1 " +
                            extra + " --db '" + db + "' > '" + log + "' 2>&1";
    const int status = std::system(cmd.c_str());
    EXPECT_EQ(status, 0) << read_bytes(log);
    core::TrackingReader reader(db);
    return reader.list_runs().front().id;
  }
  // The reference model on a pool of its own: the train pool then idles
  // while ref runs and the analyzer finds it.
  int64_t two_pool_run() {
    return profiled_run("+pools.side.workers=1 models.ref.pool=side models.ref.parallel.dp=1");
  }
  profile::RunProfile stored(int64_t run) {
    core::TrackingReader reader(db);
    return profile::load_run_profile(reader, run);
  }
  std::vector<std::string> args(int64_t run) {
    return {"--db", db, "--screen", "profile", "--run", std::to_string(run)};
  }

  std::string db;
};

TEST_F(GuiProfileTest, HoveringAFrameShowsItsMetrics) {
  const int64_t run = two_pool_run();
  auto r = run_gui(dir_, args(run), R"(
wait @profile/frame/gen/generate 20000
move @profile/frame/gen/generate
frames 3
)",
                   "hover");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& p = r.state["profile"];
  EXPECT_EQ(p["run"], run);
  EXPECT_EQ(p["message"], "");
  ASSERT_TRUE(p["hovered"].is_object()) << p.dump(1);
  EXPECT_EQ(p["hovered"]["path"], "gen/generate");
  EXPECT_EQ(p["hovered"]["kind"], "method");
  // The same numbers as the stored tree's.
  const profile::RunProfile stored_profile = stored(run);
  const auto tree = stored_profile.merged_tree();
  const profile::Frame* generate = find_frame(tree, {"gen", "generate"});
  ASSERT_TRUE(generate);
  EXPECT_EQ(p["hovered"]["calls"], generate->metrics.calls);
  EXPECT_EQ(p["hovered"]["wall_ns"], generate->metrics.wall_ns);
  EXPECT_EQ(p["hovered"]["self_ns"], generate->self_wall_ns());
  EXPECT_GT(generate->metrics.calls, 0);
  const std::string lines = p["hovered"]["lines"].dump();
  EXPECT_NE(lines.find("calls: " + std::to_string(generate->metrics.calls)), std::string::npos) << lines;
  EXPECT_NE(lines.find("self wall"), std::string::npos);
  // The frame is drawn in the method colour (teal) where it was recorded.
  auto box = item_rect(r.state, "profile/frame/gen/generate");
  ASSERT_EQ(box.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, box[0], box[1], box[2], box[3], 0x68C4C0, 40), 50);
}

TEST_F(GuiProfileTest, ClickZoomsInAndRightClickOrEscapeZoomsOut) {
  const int64_t run = two_pool_run();
  auto in = run_gui(dir_, args(run), R"(
wait @profile/frame/update/update 20000
click @profile/frame/update/update
frames 3
screenshot zoomed.png
)",
                    "zoom_in");
  ASSERT_EQ(in.exit_code, 0) << in.log;
  EXPECT_EQ(in.state["profile"]["zoom"], nlohmann::json({"update", "update"}));
  EXPECT_EQ(in.state["profile"]["node"], "update");
  // The zoomed frame spans the icicle; the other nodes are gone.
  auto all = item_rect(in.state, "profile/frame/all");
  auto zoomed = item_rect(in.state, "profile/frame/update/update");
  ASSERT_EQ(zoomed.size(), 4u);
  ASSERT_EQ(all.size(), 4u);
  EXPECT_EQ(zoomed[0], all[0]);
  EXPECT_EQ(zoomed[2], all[2]);
  EXPECT_FALSE(in.state["items"].contains("profile/frame/gen"));

  auto out = run_gui(dir_, args(run), R"(
wait @profile/frame/update/update 20000
click @profile/frame/update/update
frames 2
click @profile/frame/update/update right
frames 2
)",
                     "zoom_right");
  ASSERT_EQ(out.exit_code, 0) << out.log;
  EXPECT_EQ(out.state["profile"]["zoom"], nlohmann::json({"update"}));
  auto escape = run_gui(dir_, args(run), R"(
wait @profile/frame/update/update 20000
click @profile/frame/update/update
frames 2
key escape
frames 2
key escape
frames 2
)",
                        "zoom_escape");
  ASSERT_EQ(escape.exit_code, 0) << escape.log;
  EXPECT_EQ(escape.state["profile"]["zoom"], nlohmann::json::array());
  EXPECT_TRUE(escape.state["items"].contains("profile/frame/gen"));
}

TEST_F(GuiProfileTest, SearchHighlightsMatchesPerNodeAndWorker) {
  const int64_t run = two_pool_run();
  const profile::RunProfile p = stored(run);
  // aten::mm, as the CLI would find it: this build's linear layers may run
  // through oneDNN instead, so the count is taken from the stored tree.
  const auto tree = p.merged_tree();
  int64_t mm = 0;
  for (const auto& c : profile::context_paths(tree, "update"))
    if (frame_matches(c.leaf(), "aten::mm")) ++mm;
  auto r = run_gui(dir_, args(run), R"(
wait @profile/frame/gen 20000
click @profile/node
click @profile/node/update
frames 2
click @profile/search
text aten::mm
frames 3
)",
                   "search_mm");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["profile"]["node"], "update");
  EXPECT_EQ(r.state["profile"]["search"], "aten::mm");
  EXPECT_EQ(r.state["profile"]["hits"]["frames"], mm);

  // A search that matches, on one worker: the linear layers' products,
  // whose frames are named by the product linear.h chose on this CPU --
  // OneDnnLinear (oneDNN) or aten::mm / aten::addmm (MKL's sgemm).
  const auto train0 = profile::filtered_tree(p, "train/0");
  auto hits_of = [&](const std::string& text) {
    int64_t n = 0;
    for (const auto& c : profile::context_paths(train0))
      if (frame_matches(c.leaf(), text)) ++n;
    return n;
  };
  const std::string term = hits_of("linear") > 0 ? "linear" : "mm";
  const int64_t hits = hits_of(term);
  ASSERT_GT(hits, 0) << "no frame of train/0 matches 'linear' or 'mm'";
  auto s = run_gui(dir_, args(run), R"(
wait @profile/frame/gen 20000
click @profile/worker
click @profile/worker/train/0
frames 2
click @profile/search
text )" + term + R"(
frames 3
)",
                   "search_" + term);
  ASSERT_EQ(s.exit_code, 0) << s.log;
  const auto& state = s.state["profile"];
  EXPECT_EQ(state["worker"], "train/0");
  EXPECT_EQ(state["hits"]["frames"], hits);
  EXPECT_GT(state["hits"]["share"].get<double>(), 0);
  for (const auto& hit : state["hits"]["paths"]) {  // case-insensitive: OneDnnLinear matches "linear"
    std::string lower = hit.get<std::string>();
    std::transform(lower.begin(), lower.end(), lower.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    EXPECT_NE(lower.find(term), std::string::npos) << hit;
  }
  // Matches are outlined in yellow; the rest is dimmed.
  auto all = item_rect(s.state, "profile/frame/all");
  ASSERT_EQ(all.size(), 4u);
  EXPECT_GT(count_color(s.screenshot, all[0], all[1], all[2], all[1] + 600, 0xFFEC50, 30), 20);
}

TEST_F(GuiProfileTest, TheStepTimelineMarksTheCriticalPathAndIdlePools) {
  const int64_t run = two_pool_run();
  const profile::RunProfile p = stored(run);
  ASSERT_GE(p.steps.size(), 2u);
  const profile::StepTiming& step = p.steps[1];
  auto r = run_gui(dir_, args(run),
                   "wait @profile/view/timeline 20000\nclick @profile/view/timeline\nframes 2\n"
                   "click @profile/step\nclick @profile/step/" +
                       std::to_string(step.step) + "\nframes 2\nmove @timeline/rank/gen/1\nframes 3\n",
                   "timeline");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& t = r.state["profile"]["timeline"];
  EXPECT_EQ(r.state["profile"]["view"], "timeline");
  EXPECT_EQ(t["step"], step.step);
  ASSERT_FALSE(step.critical_path.empty());
  EXPECT_EQ(t["critical_path"], nlohmann::json(step.critical_path));
  for (const auto& n : step.nodes) {
    EXPECT_NE(std::find(t["lanes"].begin(), t["lanes"].end(), n.node), t["lanes"].end()) << n.node;
    EXPECT_TRUE(r.state["items"].contains("timeline/node/" + n.node)) << n.node;
  }
  EXPECT_TRUE(r.state["items"].contains("timeline/rank/gen/0"));
  // The side pool (ref only) idles most of the step.
  ASSERT_TRUE(t["idle"].contains("side")) << t.dump();
  EXPECT_GT(t["idle"]["side"].get<double>(), 0.3 * step.seconds);
  ASSERT_TRUE(r.state["profile"]["hovered_bar"].is_string());
  EXPECT_NE(r.state["profile"]["hovered_bar"].get<std::string>().find("gen rank 1"), std::string::npos);
  // Critical nodes are outlined in gold; the idle pool is hatched red.
  auto critical = item_rect(r.state, "timeline/node/" + step.critical_path.front());
  ASSERT_EQ(critical.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, critical[0] - 2, critical[1] - 2, critical[2] + 2, critical[3] + 2,
                        0xFFC828, 30),
            20);
  auto side = item_rect(r.state, "timeline/pool/side");
  ASSERT_EQ(side.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, side[0], side[1], side[2], side[3], 0xEB5A50, 40), 50);
  // The findings of this run are listed beside it.
  EXPECT_FALSE(r.state["profile"]["findings"].empty());
  EXPECT_TRUE(r.state["items"].contains("profile/finding/1"));
  bool pool_idle = false;
  for (const auto& f : r.state["profile"]["findings"]) pool_idle |= f["rule"] == "pool-idle";
  EXPECT_TRUE(pool_idle) << r.state["profile"]["findings"].dump();
}

TEST_F(GuiProfileTest, ADiffAgainstASecondProfiledRunColoursFramesByTheChange) {
  const int64_t b = profiled_run("");
  const int64_t a = two_pool_run();
  auto r = run_gui(dir_, args(a),
                   R"(
wait @profile/frame/update/update 20000
screenshot by_kind.png
click @profile/diff
click @profile/diff/)" +
                       std::to_string(b) + R"(
frames 3
wait @profile/diff_legend 10000
move @profile/frame/update/update
frames 3
)",
                   "diff");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& p = r.state["profile"];
  EXPECT_EQ(p["diff_run"], b);
  EXPECT_EQ(p["diff"]["run_a"], a);
  EXPECT_EQ(p["diff"]["run_b"], b);
  // The tooltip's values are the CLI's diff (`rlwb profile diff B A`).
  const profile::ProfileDiff d = profile::diff(stored(b), stored(a));
  ASSERT_TRUE(p["hovered"].is_object());
  ASSERT_TRUE(p["hovered"].contains("change"));
  auto it =
      std::find_if(d.changes.begin(), d.changes.end(), [](auto& c) { return c.path == "update/update"; });
  if (it != d.changes.end()) {
    EXPECT_NEAR(p["hovered"]["change"]["a_s"].get<double>(), it->b_s, 1e-9);
    EXPECT_NEAR(p["hovered"]["change"]["b_s"].get<double>(), it->a_s, 1e-9);
  } else {
    EXPECT_EQ(p["hovered"]["change"]["a_s"], p["hovered"]["change"]["b_s"]);
  }
  EXPECT_NEAR(p["diff"]["total_a_s"].get<double>(), d.total_b_s, 1e-9);
  // Coloured by change, not by kind: the method frame loses its teal.
  auto box = item_rect(r.state, "profile/frame/update/update");
  ASSERT_EQ(box.size(), 4u);
  const Image by_kind = read_png(path("by_kind.png"));
  EXPECT_GT(count_color(by_kind, box[0], box[1], box[2], box[3], 0x68C4C0, 40), 50);
  EXPECT_EQ(count_color(r.screenshot, box[0], box[1], box[2], box[3], 0x68C4C0, 12), 0);
}

TEST_F(GuiProfileTest, ARunWithoutAProfileSaysWhyAsTheCliDoes) {
  int64_t plain = 0;
  {
    core::TrackingWriter w(db);
    plain = w.start_run("plain", "experiments/grpo.yaml", "", "grpo", 1, {});
    w.end_run(plain, "finished");
  }
  std::string cli_says;
  try {
    stored(plain);
  } catch (const profile::ProfileError& e) {
    cli_says = e.what();
  }
  ASSERT_FALSE(cli_says.empty());
  auto r = run_gui(dir_, args(plain), "wait @profile/message 20000\nframes 2\n", "plain");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["profile"]["message"], cli_says);
  EXPECT_NE(cli_says.find("profile.enabled=true"), std::string::npos);
  EXPECT_FALSE(r.state["items"].contains("profile/frame/all"));
  // Drawn in orange where it was recorded.
  auto message = item_rect(r.state, "profile/message");
  ASSERT_EQ(message.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, message[0], message[1], message[2], message[3], 0xFFBF4C, 40), 20);
}

TEST_F(GuiProfileTest, TheRunsScreensProfileButtonOpensAProfiledRunOnly) {
  int64_t plain = 0, profiled = 0;
  {
    core::TrackingWriter w(db);
    profiled = w.start_run("profiled", "experiments/grpo.yaml", "", "grpo", 1, {});
    profile::fixtures::write_profile(w, profiled, profile::fixtures::grpo_profile());
    w.end_run(profiled, "finished");
    plain = w.start_run("plain", "experiments/grpo.yaml", "", "grpo", 1, {});
    w.end_run(plain, "finished");
  }
  const std::string plain_row = "runs/row/" + std::to_string(plain);
  const std::string profiled_row = "runs/row/" + std::to_string(profiled);
  auto refused = run_gui(
      dir_, {"--db", db, "--screen", "runs"},
      "wait @" + plain_row + " 20000\nclick @" + plain_row + "\nframes 2\nclick @button/Profile\nframes 2\n",
      "refused");
  ASSERT_EQ(refused.exit_code, 0) << refused.log;
  EXPECT_EQ(refused.state["screen"], "runs");
  auto opened = run_gui(dir_, {"--db", db, "--screen", "runs"},
                        "wait @" + profiled_row + " 20000\nclick @" + profiled_row +
                            "\nframes 2\nclick @button/Profile\nwait @profile/frame/update 20000\nframes 2\n",
                        "opened");
  ASSERT_EQ(opened.exit_code, 0) << opened.log;
  EXPECT_EQ(opened.state["screen"], "profile");
  EXPECT_EQ(opened.state["profile"]["run"], profiled);
  EXPECT_EQ(opened.state["profile"]["profiled_runs"], nlohmann::json({profiled}));
  EXPECT_EQ(opened.state["profile"]["nodes"], nlohmann::json({"gen", "ref", "update"}));
}

}  // namespace
}  // namespace rlwb::ui
