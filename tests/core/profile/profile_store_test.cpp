// A profile written to a real tracking DB and read back, the critical path
// of a step, and every reading error a user can meet.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile/profile_store.h"
#include "tests/test_files.h"

namespace rlwb::core::profile {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ProfileStoreTest : public rlwb::testing::TempDirTest {
 protected:
  ProfileStoreTest() : TempDirTest("rlwb-profile") {}
  std::string db() const { return path("rlwb.db"); }
};

NodeTiming node(const std::string& id, double start, double end, std::vector<std::string> after) {
  NodeTiming n;
  n.node = id;
  n.kind = "worker";
  n.start = start;
  n.end = end;
  n.after = std::move(after);
  n.ranks = {{0, end - start - 0.01, end - start, 4}, {1, end - start - 0.05, end - start - 0.04, 4}};
  return n;
}

TEST(CriticalPath, FollowsTheLatestEndingDependency) {
  // gen -> {ref (short), reward (long)} -> adv -> update
  std::vector<NodeTiming> nodes = {node("gen", 0, 1, {}), node("ref", 1, 1.2, {"gen"}),
                                   node("reward", 1, 1.9, {"gen"}), node("adv", 1.9, 2.0, {"ref", "reward"}),
                                   node("update", 2.0, 3.0, {"adv"})};
  EXPECT_THAT(critical_path(nodes), ElementsAre("gen", "reward", "adv", "update"));
  EXPECT_NEAR(nodes[0].rank_spread(), 0.04, 1e-12);
  EXPECT_NEAR(nodes[0].overhead(), 0.01, 1e-12);
}

TEST_F(ProfileStoreTest, WrittenProfileReadsBackWithAStepWindow) {
  int64_t run = 0;
  {
    TrackingWriter w(db());
    run = w.start_run("r", "f.yaml", "", "grpo", 1, nlohmann::json::object());
    ProfileMeta meta;
    meta.first_step = 1;
    meta.last_step = 4;
    meta.window = 2;
    meta.host_cores = 2;
    write_profile_meta(w, run, meta);
    for (int64_t s = 1; s <= 4; ++s) {
      StepTiming st;
      st.step = s;
      st.seconds = 1;
      st.nodes = {node("gen", 0, 1, {})};
      st.critical_path = {"gen"};
      write_step_timing(w, run, st);
    }
    for (int64_t first : {1, 3}) {
      WorkerWindow win;
      win.worker = "main/0";
      win.first_step = first;
      win.last_step = first + 1;
      win.tree.root().child(FrameKind::node, "gen").metrics.wall_ns = 5;
      write_worker_window(w, run, win);
    }
    w.end_run(run, "finished");
  }
  TrackingReader r(db());
  RunProfile all = load_run_profile(r, run);
  EXPECT_EQ(all.steps.size(), 4u);
  EXPECT_EQ(all.workers.size(), 2u);
  EXPECT_EQ(all.meta.window, 2);
  EXPECT_EQ(all.merged_tree().root().find(FrameKind::node, "gen")->metrics.wall_ns, 10);
  RunProfile late = load_run_profile(r, run, parse_step_range("3-4"));
  EXPECT_EQ(late.steps.size(), 2u);
  ASSERT_EQ(late.workers.size(), 1u);
  EXPECT_EQ(late.workers[0].first_step, 3);
  try {
    load_run_profile(r, run, parse_step_range("9-12"));
    FAIL();
  } catch (const ProfileError& e) {
    EXPECT_THAT(e.what(), HasSubstr("outside run"));
    EXPECT_THAT(e.what(), HasSubstr("profiled steps 1-4"));
  }
}

TEST_F(ProfileStoreTest, UnknownUnprofiledAndOtherSchemaRunsAreClearErrors) {
  int64_t plain = 0, other = 0;
  {
    TrackingWriter w(db());
    plain = w.start_run("plain", "f.yaml", "", "grpo", 1, nlohmann::json::object());
    other = w.start_run("other", "f.yaml", "", "grpo", 1, nlohmann::json::object());
    w.log_profile(other, 0, "", "meta", R"({"schema": 99})");
    w.flush();
  }
  TrackingReader r(db());
  auto message = [&](int64_t run) {
    try {
      load_run_profile(r, run);
    } catch (const ProfileError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message(777), HasSubstr("no run 777"));
  EXPECT_THAT(message(plain), HasSubstr("was not profiled"));
  EXPECT_THAT(message(plain), HasSubstr("profile.enabled=true"));
  EXPECT_THAT(message(other), HasSubstr("profile schema 99"));
}

TEST(WorkerWindowJson, MemoryFieldsRoundTripAndReadAsUnknownWhenAbsent) {
  WorkerWindow w;
  w.worker = "main/0";
  w.first_step = w.last_step = 1;
  w.peak_bytes = 1 << 20;
  w.memory_limit_bytes = int64_t{8} << 30;
  w.rss_peak_bytes = int64_t{300} << 20;
  nlohmann::json j = to_json(w);
  WorkerWindow back = worker_window_from_json(j);
  EXPECT_EQ(back.memory_limit_bytes, w.memory_limit_bytes);
  EXPECT_EQ(back.rss_peak_bytes, w.rss_peak_bytes);
  // A window stored before these were measured still loads: 0, unknown.
  j.erase("memory_limit_bytes");
  j.erase("rss_peak_bytes");
  WorkerWindow old = worker_window_from_json(j);
  EXPECT_EQ(old.memory_limit_bytes, 0);
  EXPECT_EQ(old.rss_peak_bytes, 0);
  EXPECT_EQ(old.peak_bytes, w.peak_bytes);
}

TEST(StepRange, AcceptsTheThreeFormsAndExplainsOthers) {
  EXPECT_EQ(parse_step_range("10-20").first, 10);
  EXPECT_EQ(parse_step_range("10-20").last, 20);
  EXPECT_EQ(parse_step_range("7").last, 7);
  EXPECT_EQ(parse_step_range("5-").last, 0);
  for (const char* bad : {"", "a-b", "0-3", "9-3", "-4", "3-x"})
    EXPECT_THROW(parse_step_range(bad), std::invalid_argument) << bad;
}

}  // namespace
}  // namespace rlwb::core::profile
