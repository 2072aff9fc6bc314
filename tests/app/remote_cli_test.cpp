// rlwb run --remote HOST against a real OpenSSH server on another host (a
// network namespace, tests/app/ssh_host.h): the run goes there, survives a
// cut link, and its rows are mirrored into the local DB one for one; Ctrl-C
// here stops it there; a host that cannot take the run says why before
// anything starts.
#include <gtest/gtest.h>
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "core/common/version.h"
#include "core/tracking/process_identity.h"
#include "core/tracking/run_stream.h"
#include "core/tracking/tracking.h"
#include "tests/app/cli_runs.h"
#include "tests/app/ssh_host.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/core/tracking/run_rows.h"
#include "tests/run_program.h"

namespace fs = std::filesystem;
using namespace rlwb::core;
using namespace rlwb::testing;

namespace {

class RemoteCli : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / unique_name("rlwb-remote-cli");
    host_ = std::make_unique<SshHost>(root_ / "ssh");
    if (!host_->available()) GTEST_SKIP() << "no SSH host here: " << host_->why_not();
  }
  void TearDown() override {
    host_.reset();
    if (!HasFailure() && !std::getenv("RLWB_KEEP_TEST_DIRS")) fs::remove_all(root_);
  }

  std::vector<std::string> remote_flags(const std::string& alias = "rlwb-remote") const {
    return {"--remote",      alias,   "--ssh-config", host_->ssh_config(),
            "--remote-rlwb", kCliBin, "--remote-dir", remote_dir()};
  }
  // small_ppo_args with `steps` steps (about 0.05 s each here), evaluated
  // and checkpointed every 50.
  std::vector<std::string> ppo_args(int steps, bool remote) const {
    std::vector<std::string> args;
    for (const auto& arg : small_ppo_args(local_db())) {
      if (arg.rfind("trainer.steps=", 0) == 0)
        args.push_back("trainer.steps=" + std::to_string(steps));
      else if (arg.rfind("trainer.eval.every=", 0) == 0 || arg.rfind("+trainer.checkpoint.every=", 0) == 0)
        args.push_back(arg.substr(0, arg.find('=')) + "=50");
      else
        args.push_back(arg);
    }
    if (remote)
      for (const auto& flag : remote_flags()) args.push_back(flag);
    return args;
  }
  std::string remote_dir() const { return (root_ / "remote").string(); }
  std::string remote_db() const { return (root_ / "remote" / "runs" / "rlwb.db").string(); }
  std::string local_db() const { return (root_ / "local" / "rlwb.db").string(); }
  std::string err_of(const char* who) const { return read_bytes((root_ / who / "err.txt").string()); }

  // The local run that mirrors remote run 1, once it has a metric.
  std::optional<int64_t> mirrored_with_metrics() const {
    try {
      auto run = find_mirrored_run(local_db(), "rlwb-remote", remote_db(), 1);
      if (run && !TrackingReader(local_db()).metrics(*run).empty()) return run;
    } catch (const std::exception&) {  // being made
    }
    return std::nullopt;
  }

  fs::path root_;
  std::unique_ptr<SshHost> host_;
};

TEST_F(RemoteCli, ARunThereIsMirroredHereRowForRowThroughACutLinkAndComparesWithALocalRun) {
  const pid_t rlwb = start_cli(ppo_args(120, true), root_ / "here");
  ASSERT_TRUE(wait_until([&] { return mirrored_with_metrics().has_value(); }, 240)) << err_of("here");
  // Pull the cable for 9 s: ssh notices within about 6 s, the mirror tries
  // again until the link is back, and the run goes on there meanwhile.
  ASSERT_TRUE(host_->set_link_up(false));
  std::this_thread::sleep_for(std::chrono::seconds(9));
  ASSERT_TRUE(host_->set_link_up(true));
  ASSERT_EQ(wait_cli(rlwb), 0) << err_of("here");
  const std::string err = err_of("here");
  EXPECT_NE(err.find("dropped"), std::string::npos) << err;
  EXPECT_NE(err.find("started on rlwb-remote"), std::string::npos) << err;

  const int64_t mirror = *find_mirrored_run(local_db(), "rlwb-remote", remote_db(), 1);
  EXPECT_EQ(TrackingReader(remote_db()).run(1)->status, "finished");
  EXPECT_EQ(TrackingReader(local_db()).run(mirror)->status, "finished");
  const auto remote_rows = rows_of(remote_db(), 1);
  EXPECT_EQ(rows_of(local_db(), mirror), remote_rows);
  EXPECT_GT(remote_rows.at("metrics").size(), 2000u);

  // Following again a run mirrored to its end adds nothing.
  auto follow = remote_flags();
  follow.insert(follow.begin(), {"run", "--db", local_db()});
  follow.insert(follow.end(), {"--follow", "1"});
  const ProgramOutput again = run_program(kCliBin, follow, 60);
  EXPECT_EQ(again.code, 0) << again.text;
  EXPECT_EQ(rows_of(local_db(), mirror), remote_rows);

  // The same experiment run here, in the same DB: side by side with the
  // remote one, and equal to it (same seed, same computation).
  ASSERT_EQ(wait_cli(start_cli(ppo_args(120, false), root_ / "local-run")), 0) << err_of("local-run");
  const int64_t local_run = mirror + 1;
  const auto here = metrics_of(local_db(), local_run), there = metrics_of(local_db(), mirror);
  EXPECT_EQ(here, there);
  const ProgramOutput compare = run_program(
      kCliBin, {"runs", "compare", std::to_string(mirror), std::to_string(local_run), "--db", local_db()},
      60);
  EXPECT_EQ(compare.code, 0) << compare.text;
  EXPECT_NE(compare.out.find("critic/score/mean"), std::string::npos) << compare.out;
}

// A mirror that gives up (the link stays down longer than --reconnect-for)
// leaves the run going there and says how to pick it up; that command later
// continues the mirror from its last batch to the run's end.
TEST_F(RemoteCli, AMirrorThatGaveUpIsPickedUpAgainByTheCommandItPrinted) {
  auto args = ppo_args(120, true);
  args.insert(args.end(), {"--reconnect-for", "2"});
  const pid_t rlwb = start_cli(args, root_ / "here");
  ASSERT_TRUE(wait_until([&] { return mirrored_with_metrics().has_value(); }, 240)) << err_of("here");
  ASSERT_TRUE(host_->set_link_up(false));
  EXPECT_EQ(wait_cli(rlwb), 1) << err_of("here");
  ASSERT_TRUE(host_->set_link_up(true));
  const std::string err = err_of("here");
  EXPECT_NE(err.find("lost the link to rlwb-remote"), std::string::npos) << err;
  EXPECT_NE(err.find("--follow 1"), std::string::npos) << err;
  const int64_t mirror = *mirrored_with_metrics();
  EXPECT_EQ(TrackingReader(local_db()).run(mirror)->status, "running");

  auto follow = remote_flags();
  follow.insert(follow.begin(), {"run", "--db", local_db()});
  follow.insert(follow.end(), {"--follow", "1"});
  const ProgramOutput again = run_program(kCliBin, follow, 240);
  EXPECT_EQ(again.code, 0) << again.text;
  EXPECT_NE(again.err.find("is mirrored here already as run " + std::to_string(mirror)), std::string::npos)
      << again.err;
  EXPECT_EQ(TrackingReader(local_db()).run(mirror)->status, "finished");
  EXPECT_EQ(rows_of(local_db(), mirror), rows_of(remote_db(), 1));
}

TEST_F(RemoteCli, CtrlCHereStopsTheRunThereAndBothEndInterrupted) {
  const pid_t rlwb = start_cli(ppo_args(2000, true), root_ / "here");  // stopped long before its end
  ASSERT_TRUE(wait_until([&] { return mirrored_with_metrics().has_value(); }, 240)) << err_of("here");
  kill(rlwb, SIGINT);
  EXPECT_EQ(wait_cli(rlwb), 130) << err_of("here");
  const int64_t mirror = *mirrored_with_metrics();
  EXPECT_EQ(TrackingReader(remote_db()).run(1)->status, "interrupted");
  EXPECT_EQ(TrackingReader(local_db()).run(mirror)->status, "interrupted");
  EXPECT_EQ(rows_of(local_db(), mirror), rows_of(remote_db(), 1));
  const int64_t controller = TrackingReader(remote_db()).run(1)->pid;
  EXPECT_TRUE(wait_until([&] { return !process_is_running(controller, ""); }, 20))
      << "the remote controller outlived its run";
}

TEST_F(RemoteCli, AHostThatCannotTakeTheRunSaysWhyAndNothingStarts) {
  const std::string ppo = std::string(kSourceDir) + "/experiments/ppo.yaml";
  auto attempt = [&](std::vector<std::string> flags) {
    std::vector<std::string> args = {"run", ppo, "--db", local_db()};
    args.insert(args.end(), flags.begin(), flags.end());
    return run_program(kCliBin, args, 90);
  };
  auto expect_refusal = [&](const ProgramOutput& out, const std::string& says) {
    EXPECT_EQ(out.code, 2) << out.text;
    EXPECT_NE(out.err.find(says), std::string::npos) << out.err;
  };

  auto flags = remote_flags("no-such-host.invalid");
  expect_refusal(attempt(flags), "does not resolve");
  expect_refusal(attempt(remote_flags("rlwb-wrong-key")), "refused the key");

  flags = remote_flags();
  flags[5] = "/opt/nowhere/rlwb";  // --remote-rlwb
  expect_refusal(attempt(flags), "has no rlwb command '/opt/nowhere/rlwb'");

  const std::string other = (root_ / "old-rlwb").string();
  std::ofstream(other) << "#!/bin/sh\necho 'rlwb 0.0.1'\n";
  fs::permissions(other, fs::perms::owner_all);
  flags[5] = other;
  expect_refusal(attempt(flags), std::string("runs rlwb 0.0.1 but this is rlwb ") + version());

  // Nothing was started there, and nothing written here.
  EXPECT_FALSE(fs::exists(remote_db()));
  EXPECT_FALSE(fs::exists(local_db()));
  // A bad graph file is caught here, before the host is even asked.
  const ProgramOutput typo = attempt([&] {
    auto f = remote_flags();
    f.push_back("trainer.stepz=3");
    return f;
  }());
  EXPECT_NE(typo.code, 0);
  EXPECT_NE(typo.err.find("stepz"), std::string::npos) << typo.err;
  EXPECT_FALSE(fs::exists(remote_dir()));

  // What only the host can refuse (here a launch file naming a pool the
  // experiment lacks) ends the run there before it starts: its output says why.
  const std::string launch = (root_ / "bad-launch.yaml").string();
  std::ofstream(launch) << "hosts:\n  a: {exec: [ssh, node-a]}\nplacement:\n  nosuchpool: a\n";
  flags = remote_flags();
  flags.insert(flags.end(), {"--launch", launch});
  const ProgramOutput refused_there = attempt(flags);
  EXPECT_EQ(refused_there.code, 1) << refused_there.text;
  EXPECT_NE(refused_there.err.find("exited before its run started"), std::string::npos) << refused_there.err;
  EXPECT_NE(refused_there.err.find("nosuchpool"), std::string::npos) << refused_there.err;
}

}  // namespace
