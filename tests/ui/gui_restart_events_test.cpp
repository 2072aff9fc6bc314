// A worker failure and the restart that follows are visible in the GUI: a
// real run with trainer.on_worker_failure: restart has one of its workers
// killed (kill -9) after its first checkpoint; its dashboard's Events tab
// then shows the failure and the restart, as a person opening it would see,
// and its header says what the finished run recovered from.
#include <gtest/gtest.h>
#include <signal.h>

#include "core/tracking/tracking.h"
#include "tests/app/cli_process.h"
#include "tests/test_paths.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

using test::item_rect;
using test::read_bytes;
using test::run_gui;

class GuiRestartEventsTest : public test::TempDirTest {};

bool has_artifact(const std::string& db, const std::string& kind) {
  try {
    if (!std::filesystem::exists(db)) return false;
    for (auto& a : core::TrackingReader(db).artifacts(1))
      if (a.kind == kind) return true;
  } catch (const std::exception&) {  // the DB is being made
  }
  return false;
}

TEST_F(GuiRestartEventsTest, AKilledWorkerAndItsRestartShowInTheDashboardsEvents) {
  if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
  const std::string db = path("runs/rlwb.db");
  auto args = rlwb::testing::small_ppo_args(db);
  args.insert(args.end(), {"+trainer.on_worker_failure=restart", "+trainer.max_restarts=3"});
  const pid_t rlwb = rlwb::testing::start_cli(args, dir_ / "run");
  ASSERT_TRUE(rlwb::testing::wait_until([&] { return has_artifact(db, "resume_checkpoint"); }, 240));
  const auto workers = rlwb::testing::worker_processes_of(rlwb);
  ASSERT_FALSE(workers.empty());
  kill(*workers.rbegin(), SIGKILL);
  ASSERT_EQ(rlwb::testing::wait_cli(rlwb), 0) << read_bytes(path("run/err.txt"));

  // The recovery banner is a line above the tabs: once it is drawn the
  // layout stands still (clicked before it, the Events tab's place was
  // taken by the x-axis box a frame later, under load in CI).
  auto r = run_gui(dir_, {"--db", db, "--run", "1"}, R"(
wait @dashboard/recovered 20000
wait @tab/Events 20000
click @tab/Events
wait @dashboard/event/0 10000
frames 3
screenshot events.png
)");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& texts = r.state["dashboard"]["event_texts"];
  int failure = -1, restart = -1;
  for (size_t i = 0; i < texts.size(); ++i) {
    const std::string text = texts[i];
    if (failure < 0 && text.rfind("worker failure", 0) == 0) failure = static_cast<int>(i);
    if (restart < 0 && text.rfind("restarting the workers (restart 1 of 3)", 0) == 0)
      restart = static_cast<int>(i);
  }
  ASSERT_GE(failure, 0) << texts.dump(1);
  ASSERT_GE(restart, 0) << texts.dump(1);
  // Both rows are drawn on the screen (not scrolled away), failure first.
  const auto failure_row = item_rect(r.state, "dashboard/event/" + std::to_string(failure));
  const auto restart_row = item_rect(r.state, "dashboard/event/" + std::to_string(restart));
  ASSERT_EQ(failure_row.size(), 4u);
  ASSERT_EQ(restart_row.size(), 4u);
  EXPECT_LT(failure_row[1], restart_row[1]);
  // It finished: the header says what it recovered from, not "error".
  EXPECT_EQ(r.state["dashboard"]["status"], "finished");
  EXPECT_EQ(item_rect(r.state, "dashboard/recovered").size(), 4u);
  EXPECT_TRUE(item_rect(r.state, "dashboard/error").empty());
}

}  // namespace
}  // namespace rlwb::ui
