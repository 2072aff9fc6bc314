// The Profile screen's loader: reads a stored profile and its findings on
// its own thread, lists the profiled runs, and for a run that cannot be
// shown gives the text `rlwb profile` prints (ProfileError).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "core/profile/profile_store.h"
#include "tests/core/profile/profile_fixtures.h"
#include "tests/ui/ui_test_support.h"
#include "ui/profile/profile_loader.h"

namespace rlwb::ui {
namespace {

using namespace core::profile::fixtures;

class ProfileLoaderTest : public test::TempDirTest {
 protected:
  // Calls update() until `done` or 10 s have passed.
  template <typename Done>
  bool poll(ProfileLoader& loader, Done done) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < until) {
      loader.update();
      if (done()) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

TEST_F(ProfileLoaderTest, ReadsAProfileAndItsFindingsOffTheUiThreadAndListsProfiledRuns) {
  const std::string db = path("rlwb.db");
  int64_t profiled = 0, plain = 0;
  {
    core::TrackingWriter w(db);
    profiled = w.start_run("profiled", "grpo.yaml", "", "grpo", 1, {});
    plain = w.start_run("plain", "grpo.yaml", "", "grpo", 1, {});
    ProfileShape straggler;
    straggler.step.gen.compute = {0.30, 0.45};
    write_profile(w, profiled, grpo_profile(straggler));
    w.end_run(profiled, "finished");
    w.end_run(plain, "finished");
  }
  ProfileLoader loader;
  loader.open(db, 50);
  loader.want({profiled});
  EXPECT_EQ(loader.get(profiled), nullptr);  // nothing is read on this thread
  ASSERT_TRUE(poll(loader, [&] { return loader.settled(); }));
  const LoadedProfile* p = loader.get(profiled);
  ASSERT_TRUE(p && p->profile) << (p ? p->error : "");
  EXPECT_EQ(p->profile->steps.size(), 4u);
  ASSERT_FALSE(p->findings.empty());
  EXPECT_EQ(p->findings.front().rule, "straggler-rank");
  EXPECT_EQ(loader.profiled_runs(), std::vector<int64_t>{profiled});
  EXPECT_TRUE(loader.is_profiled(profiled));
  EXPECT_FALSE(loader.is_profiled(plain));
}

TEST_F(ProfileLoaderTest, ARunThatCannotBeShownGetsTheMessageTheCliPrints) {
  const std::string db = path("rlwb.db");
  int64_t plain = 0;
  {
    core::TrackingWriter w(db);
    plain = w.start_run("plain", "grpo.yaml", "", "grpo", 1, {});
    w.end_run(plain, "finished");
  }
  std::string cli_says, unknown_says;
  {
    core::TrackingReader reader(db);
    try {
      core::profile::load_run_profile(reader, plain);
    } catch (const core::profile::ProfileError& e) {
      cli_says = e.what();
    }
    try {
      core::profile::load_run_profile(reader, 99);
    } catch (const core::profile::ProfileError& e) {
      unknown_says = e.what();
    }
  }
  ASSERT_NE(cli_says.find("was not profiled"), std::string::npos) << cli_says;
  ProfileLoader loader;
  loader.open(db, 50);
  loader.want({plain, 99});
  ASSERT_TRUE(poll(loader, [&] { return loader.settled(); }));
  ASSERT_TRUE(loader.get(plain));
  EXPECT_FALSE(loader.get(plain)->profile);
  EXPECT_EQ(loader.get(plain)->error, cli_says);
  EXPECT_EQ(loader.get(99)->error, unknown_says);
  EXPECT_TRUE(loader.profiled_runs().empty());
}

TEST_F(ProfileLoaderTest, AMissingDatabaseIsSaidAndReadOnceItAppears) {
  const std::string db = path("later.db");
  ProfileLoader loader;
  loader.open(db, 50);
  loader.want({1});
  ASSERT_TRUE(poll(loader, [&] { return loader.settled(); }));
  EXPECT_NE(loader.list_error().find("no tracking database"), std::string::npos) << loader.list_error();
  {
    core::TrackingWriter w(db);
    const int64_t run = w.start_run("late", "grpo.yaml", "", "grpo", 1, {});
    write_profile(w, run, grpo_profile());
    w.end_run(run, "finished");
  }
  EXPECT_TRUE(poll(loader, [&] { return loader.get(1) && loader.get(1)->profile; }));
  EXPECT_TRUE(loader.list_error().empty());
}

}  // namespace
}  // namespace rlwb::ui
