// `rlwb profile show|export|diff` and `rlwb analyze` as a user runs them,
// on a tracking DB the test writes with the profile store's functions:
// what each prints or writes (the Chrome trace checked by Python's json
// module and tests/app/check_trace_event_format.py, the pprof file's gzip
// header), and the clear errors for an unknown run, an unprofiled run, a
// step window outside the profile, another schema, a bad --steps and an
// --out that cannot be written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "tests/core/profile/profile_fixtures.h"
#include "tests/test_files.h"
#include "tests/run_program.h"
#include "tests/test_paths.h"

namespace rlwb {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace core::profile::fixtures;

struct CliResult {
  int code = -1;
  std::string out, err;
};

class ProfileCli : public testing::TempDirTest {
 protected:
  ProfileCli() : TempDirTest("rlwb-profile-cli") {}

  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(testing::kCliBin))
      GTEST_SKIP() << "build the rlwb program first (ninja rlwb)";
    core::TrackingWriter w(db());
    auto start = [&](const std::string& name) {
      return w.start_run(name, "grpo.yaml", "", "grpo", 1, nlohmann::json::object());
    };
    ProfileShape slow;
    slow.step.gen.compute = {0.30, 0.45};  // a straggler
    slow.tree.copy_ns = 30'000'000;        // and copies under aten::linear
    slow_run_ = write_profile(w, start("slow"), grpo_profile(slow));
    clean_run_ = write_profile(w, start("clean"), grpo_profile());
    plain_run_ = start("plain");
    other_schema_run_ = start("other");
    w.log_profile(other_schema_run_, 0, "", "meta", R"({"schema": 99})");
    for (int64_t run : {slow_run_, clean_run_, plain_run_, other_schema_run_}) w.end_run(run, "finished");
  }

  std::string db() const { return path("rlwb.db"); }

  // rlwb ARGS --db <the test's DB>, its exit code and what it printed.
  CliResult rlwb(std::vector<std::string> args) const {
    args.push_back("--db");
    args.push_back(db());
    testing::ProgramOutput o = testing::run_program(testing::kCliBin, args);
    return {o.code, o.out, o.err};
  }

  int64_t slow_run_ = 0, clean_run_ = 0, plain_run_ = 0, other_schema_run_ = 0;
};

TEST_F(ProfileCli, ShowPrintsTheHottestContextsAndTheNodes) {
  const CliResult r = rlwb({"profile", "show", std::to_string(slow_run_), "--top", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Profile of run " + std::to_string(slow_run_) + ": steps 1-4"));
  EXPECT_THAT(r.out, HasSubstr("Hottest contexts by self time (every node and worker): 3 of 12"));
  EXPECT_THAT(r.out, HasSubstr("update/update\n"));
  EXPECT_THAT(r.out, HasSubstr("Nodes, mean per step (4 steps"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("gen +worker +main +2 +455 ms"));
  const CliResult ref = rlwb({"profile", "show", std::to_string(slow_run_), "--node", "ref", "--worker",
                              "main/1", "--steps", "3-4"});
  ASSERT_EQ(ref.code, 0) << ref.err;
  EXPECT_THAT(ref.out, HasSubstr("node 'ref', worker 'main/1': 3 of 3"));
  EXPECT_THAT(ref.out, HasSubstr("steps 3-4, 2 worker windows"));
  EXPECT_THAT(ref.out, Not(HasSubstr("update/update\n")));
}

TEST_F(ProfileCli, ExportWritesChromeFoldedAndPprofFiles) {
  const std::string trace = path("trace.json");
  const CliResult chrome =
      rlwb({"profile", "export", std::to_string(slow_run_), "--format", "chrome", "--out", trace});
  ASSERT_EQ(chrome.code, 0) << chrome.err;
  EXPECT_THAT(chrome.err, HasSubstr("written to " + trace));
  const std::string checker = std::string(testing::kSourceDir) + "/tests/app/check_trace_event_format.py";
  const std::string check = "python3 " + checker + " " + trace + " >" + path("check.out") + " 2>&1";
  EXPECT_EQ(std::system(check.c_str()), 0) << testing::read_bytes(path("check.out"));
  EXPECT_THAT(testing::read_bytes(path("check.out")), HasSubstr("valid: "));

  const CliResult folded = rlwb({"profile", "export", std::to_string(slow_run_), "--format", "folded"});
  ASSERT_EQ(folded.code, 0) << folded.err;
  EXPECT_THAT(folded.out, HasSubstr("update;update 1120000\n"));
  EXPECT_THAT(folded.out, HasSubstr("update;update;aten::linear;aten::contiguous;aten::copy_ "));

  const std::string pprof = path("run.pb.gz");
  const CliResult binary =
      rlwb({"profile", "export", std::to_string(slow_run_), "--format", "pprof", "--out", pprof});
  ASSERT_EQ(binary.code, 0) << binary.err;
  const std::string bytes = testing::read_bytes(pprof);
  ASSERT_GT(bytes.size(), 100u);
  EXPECT_EQ(bytes.substr(0, 2), "\x1f\x8b");
  const std::string gunzip = "gzip -t " + pprof;  // a whole gzip stream, trailer included
  EXPECT_EQ(std::system(gunzip.c_str()), 0);
}

TEST_F(ProfileCli, DiffRanksTheContextsThatChanged) {
  const CliResult r =
      rlwb({"profile", "diff", std::to_string(clean_run_), std::to_string(slow_run_), "--top", "2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("run " + std::to_string(clean_run_) + " (4 profiled steps"));
  // The copies are new in the slow run, and aten::mm lost what they took:
  // 99 ms -> 69 ms a call, two workers; 27 of the 30 ms are in aten::copy_.
  EXPECT_THAT(r.out, ::testing::ContainsRegex(
                         "-60\\.0 ms +198 ms +138 ms +0\\.70x +update/update/aten::linear/aten::mm\n"));
  EXPECT_THAT(
      r.out,
      ::testing::ContainsRegex(
          "\\+54\\.0 ms +- +54\\.0 ms +added +update/update/aten::linear/aten::contiguous/aten::copy_\n"));
  EXPECT_THAT(r.out, HasSubstr("more changed contexts"));
}

TEST_F(ProfileCli, AnalyzePrintsFindingsRankedByExpectedGain) {
  const CliResult r = rlwb({"analyze", std::to_string(slow_run_)});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("findings ranked by expected gain"));
  EXPECT_THAT(r.out, HasSubstr("1. [straggler-rank] rank 1 of node 'gen' is a straggler"));
  EXPECT_THAT(r.out, HasSubstr("2. [op-strided-copy]"));
  EXPECT_THAT(r.out, HasSubstr("change:   "));
  const CliResult clean = rlwb({"analyze", std::to_string(clean_run_), "--steps", "2-"});
  ASSERT_EQ(clean.code, 0) << clean.err;
  EXPECT_THAT(clean.out, HasSubstr("no findings"));
}

TEST_F(ProfileCli, BadInputsAreClearErrors) {
  auto error_of = [&](std::vector<std::string> args, int code) {
    const CliResult r = rlwb(std::move(args));
    EXPECT_EQ(r.code, code) << r.out << r.err;
    EXPECT_EQ(r.out, "");
    return r.err;
  };
  EXPECT_THAT(error_of({"profile", "show", "999"}, 1), HasSubstr("no run 999"));
  EXPECT_THAT(error_of({"analyze", std::to_string(plain_run_)}, 1), HasSubstr("was not profiled"));
  EXPECT_THAT(error_of({"profile", "show", std::to_string(slow_run_), "--steps", "7-9"}, 1),
              HasSubstr("outside run " + std::to_string(slow_run_) + "'s profiled steps 1-4"));
  EXPECT_THAT(error_of({"profile", "export", std::to_string(other_schema_run_), "--format", "folded"}, 1),
              HasSubstr("profile schema 99"));
  EXPECT_THAT(error_of({"profile", "diff", std::to_string(slow_run_), std::to_string(plain_run_)}, 1),
              HasSubstr("was not profiled"));
  const std::string unwritable = path("no-such-folder") + "/trace.json";
  EXPECT_THAT(
      error_of({"profile", "export", std::to_string(slow_run_), "--format", "chrome", "--out", unwritable},
               1),
      HasSubstr("cannot write " + unwritable));
  EXPECT_FALSE(std::filesystem::exists(unwritable));
  EXPECT_THAT(error_of({"analyze", std::to_string(slow_run_), "--steps", "4-2"}, 2),
              HasSubstr("--steps: bad step range"));
  EXPECT_THAT(error_of({"profile", "export", std::to_string(slow_run_), "--format", "pprof"}, 2),
              HasSubstr("give it --out FILE"));
  EXPECT_THAT(error_of({"profile", "export", std::to_string(slow_run_), "--format", "svg"}, 2),
              HasSubstr("svg"));
}

}  // namespace
}  // namespace rlwb
