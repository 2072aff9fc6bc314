// A run on an SSH host started from the GUI's Launch screen, as a person
// would: pick the "remote" target, type the host and where rlwb is there,
// start, watch the mirrored run's dashboard fill and finish; Stop, which
// ends the run there as interrupted; and Kill, which kills its controller
// there. The host is a network namespace with a
// real OpenSSH server (tests/app/ssh_host.h).
#include <gtest/gtest.h>

#include "core/tracking/process_identity.h"
#include "core/tracking/run_stream.h"
#include "core/tracking/tracking.h"
#include "tests/app/ssh_host.h"
#include "tests/core/tracking/run_rows.h"
#include "tests/test_paths.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

using test::read_bytes;
using test::run_gui;
using test::write_bytes;

class GuiRemoteRunTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    host = std::make_unique<rlwb::testing::SshHost>(dir_ / "ssh");
    if (!host->available()) GTEST_SKIP() << "no SSH host here: " << host->why_not();
    file = path("demo.yaml");
    db = path("runs/rlwb.db");
    remote_db = path("remote/runs/rlwb.db");
    write_bytes(file, read_bytes(test::source_path("experiments/demo.yaml")));
  }
  void TearDown() override {
    host.reset();
    TempDirTest::TearDown();
  }

  // Launch screen, remote target, the host's fields, then `overrides`.
  std::string launch_script(const std::string& overrides) const {
    return R"(
click @tab/Launch
wait @launch/target 20000
click @launch/target
wait @launch/target/remote 5000
click @launch/target/remote
wait @launch/remote/host 5000
click @launch/remote/host
text rlwb-remote
click @launch/remote/ssh_config
text )" + host->ssh_config() +
           R"(
click @launch/remote/dir
key ctrl+a
text )" + path("remote") +
           R"(
click @launch/remote/rlwb
key ctrl+a
text )" + rlwb::testing::kCliBin +
           R"(
click @launch/overrides
text )" + overrides +
           R"(
click @"button/Start run"
)";
  }

  std::unique_ptr<rlwb::testing::SshHost> host;
  std::string file, db, remote_db;
};

// Three sessions one after the other in one test (run side by side, the
// GUIs and the runs of several such tests starve each other on 2 cores):
// a run that finishes, one stopped, one killed.
TEST_F(GuiRemoteRunTest, ARemoteRunFillsItsDashboardHereAndStopAndKillReachTheRunsThere) {
  const std::vector<std::string> args = {"--db", db, "--open", file, "--cli", rlwb::testing::kCliBin};
  auto controller_output = [&] { return read_bytes(path("runs/logs/gui/controller-1.log")); };
  auto r = run_gui(dir_, args, launch_script("trainer.steps=3 models.squarer.config.sleep_ms=1500") + R"(
wait @launch/run 90000
screenshot launch.png
click @"button/Open dashboard"
wait @dashboard/status/running 20000
wait @plot/global_total/mean 30000
screenshot running.png
wait @dashboard/status/finished 120000
sleep 600
frames 5
)");
  ASSERT_EQ(r.exit_code, 0) << r.log << "\ncontroller output:\n" << controller_output();
  const auto& launch = r.state["launch"];
  EXPECT_EQ(launch["target"], "remote");
  EXPECT_EQ(launch["exit_code"], 0) << launch.dump();
  const auto& argv = launch["argv"];
  ASSERT_NE(std::find(argv.begin(), argv.end(), "--remote"), argv.end()) << argv.dump();
  const int64_t run = launch["run_id"];
  ASSERT_GT(run, 0);
  EXPECT_EQ(r.state["dashboard"]["run"], run);
  EXPECT_EQ(r.state["dashboard"]["status"], "finished");
  // The dashboard's run is the mirror of the run there, row for row.
  EXPECT_EQ(core::find_mirrored_run(db, "rlwb-remote", remote_db, 1), run);
  EXPECT_EQ(rlwb::testing::rows_of(db, run), rlwb::testing::rows_of(remote_db, 1));
  for (auto& [key, points] : r.state["dashboard"]["metrics"].items()) EXPECT_EQ(points, 3) << key;

  const std::string long_run = "trainer.steps=40 models.squarer.config.sleep_ms=1500";
  const std::string until_stepping = R"(
wait @launch/run/running 90000
wait @launch/run/stepping 60000
)";
  auto stopped = run_gui(dir_, args, launch_script(long_run) + until_stepping + R"(
screenshot stopping.png
click @button/Stop
wait @launch/run/interrupted 60000
wait @launch/controller/ended 30000
frames 5
)",
                         "stop");
  ASSERT_EQ(stopped.exit_code, 0) << stopped.log << "\ncontroller output:\n" << controller_output();
  EXPECT_EQ(stopped.state["launch"]["exit_code"], 130) << stopped.state["launch"].dump();

  auto killed = run_gui(dir_, args, launch_script(long_run) + until_stepping + R"(
click @button/Kill
wait @launch/run/failed 60000
wait @launch/controller/ended 30000
screenshot killed.png
frames 5
)",
                        "kill");
  ASSERT_EQ(killed.exit_code, 0) << killed.log << "\ncontroller output:\n" << controller_output();
  EXPECT_EQ(killed.state["launch"]["exit_code"], 1) << killed.state["launch"].dump();

  core::TrackingReader there(remote_db);
  for (int64_t remote_run = 1; remote_run <= 3; ++remote_run) {
    auto mirror = core::find_mirrored_run(db, "rlwb-remote", remote_db, remote_run);
    ASSERT_TRUE(mirror.has_value()) << "remote run " << remote_run;
    EXPECT_EQ(core::TrackingReader(db).run(*mirror)->status, there.run(remote_run)->status) << remote_run;
  }
  // Stop ended the second there as interrupted, long before its 40 steps.
  EXPECT_EQ(there.run(2)->status, "interrupted");
  EXPECT_LT(there.run(2)->last_step, 40);
  // Kill killed the third's controller there (gone, or a zombie no one
  // reaps: not running), and the run ended failed.
  EXPECT_EQ(there.run(3)->status, "failed");
  EXPECT_FALSE(core::process_is_running(there.run(3)->pid, "")) << "the controller there is still alive";
}

}  // namespace
}  // namespace rlwb::ui
