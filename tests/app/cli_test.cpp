// The rlwb command line as a user runs it: validate, run, runs list/show,
// Ctrl-C in the middle of a run, and a controller killed with SIGKILL --
// in every case no worker process may outlive the run. Also what every
// level of rlwb and rlwb-worker answers to --help and to usage errors.
#include "core/graph/experiment.h"
#include "core/tracking/tracking.h"

#include <SQLiteCpp/Database.h>
#include "tests/app/cli_runs.h"
#include "tests/core/rpc/runtime_test_support.h"
#include "tests/run_program.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <fcntl.h>
#include <sys/wait.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

using Clock = std::chrono::steady_clock;

using Output = rlwb::testing::ProgramOutput;
using rlwb::testing::run_program;
using rlwb::testing::wait_until;
using rlwb::testing::worker_processes_of;

Output run_cli(const std::vector<std::string>& args, int timeout_s = 120) {
  return run_program(rlwb::testing::kCliBin, args, timeout_s);
}

std::string demo_file() { return std::string(rlwb::testing::kSourceDir) + "/experiments/demo.yaml"; }
std::string temp_db() { return "/tmp/" + rlwb::testing::unique_name("rlwb-cli") + ".db"; }

pid_t spawn_cli(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(rlwb::testing::kCliBin)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(rlwb::testing::kCliBin, argv.data());
    _exit(127);
  }
  return pid;
}

TEST(Cli, ValidateAcceptsTheDemoGraph) {
  auto out = run_cli({"validate", demo_file()});
  EXPECT_EQ(out.code, 0) << out.text;
  EXPECT_NE(out.text.find("ok"), std::string::npos) << out.text;
}

TEST(Cli, ValidateListsEveryProblemWithFileAndNode) {
  std::string path = "/tmp/" + rlwb::testing::unique_name("bad") + ".yaml";
  std::ofstream(path) << R"(name: bad
pools: {p: {workers: 1}}
models:
  m: {role: demo, pool: p}
task: {name: toy_numbers}
nodes:
  - {id: a, call: m.squaer, in: [x], out: [y]}
  - {id: b, call: m.negate, in: [nothing], out: [z]}
)";
  auto out = run_cli({"validate", path});
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("node 'a'"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("squaer"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("node 'b'"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find("nothing"), std::string::npos) << out.text;
  EXPECT_NE(out.text.find(path), std::string::npos) << out.text;
}

TEST(Cli, RunRecordsTheRunAndRunsListAndShowReadIt) {
  std::string db = temp_db();
  auto run = run_cli({"run", demo_file(), "trainer.steps=2", "--db", db, "--name", "cli-demo"});
  ASSERT_EQ(run.code, 0) << run.text;
  EXPECT_NE(run.text.find("step 2/2"), std::string::npos) << run.text;
  auto list = run_cli({"runs", "list", "--db", db});
  EXPECT_EQ(list.code, 0) << list.text;
  EXPECT_NE(list.text.find("cli-demo"), std::string::npos) << list.text;
  EXPECT_NE(list.text.find("finished"), std::string::npos) << list.text;
  auto show = run_cli({"runs", "show", "1", "--db", db});
  EXPECT_EQ(show.code, 0) << show.text;
  EXPECT_NE(show.text.find("timing_s/square"), std::string::npos) << show.text;
  EXPECT_NE(show.text.find("trainer.steps"), std::string::npos) << show.text;
  auto missing = run_cli({"runs", "show", "99", "--db", db});
  EXPECT_NE(missing.code, 0);
  EXPECT_NE(missing.text.find("no run 99"), std::string::npos) << missing.text;
}

// --from-run records the run relaunched; one that is not in the DB is an
// error before anything starts.
TEST(Cli, FromRunIsRecordedAndAnUnknownOneStartsNothing) {
  std::string db = temp_db();
  auto first = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db});
  ASSERT_EQ(first.code, 0) << first.text;
  auto again = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db, "--from-run", "1"});
  ASSERT_EQ(again.code, 0) << again.text;
  EXPECT_EQ(rlwb::core::TrackingReader(db).run(2)->from_run, 1);
  auto show = run_cli({"runs", "show", "2", "--db", db});
  EXPECT_NE(show.text.find("from run"), std::string::npos) << show.text;
  EXPECT_NE(show.text.find("1 (relaunched from it)"), std::string::npos) << show.text;
  auto unknown = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db, "--from-run", "7"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_NE(unknown.text.find("--from-run 7: no such run in " + db), std::string::npos) << unknown.text;
  EXPECT_EQ(rlwb::core::TrackingReader(db).list_runs().size(), 2u) << "a run was started";
  auto negative = run_cli({"run", demo_file(), "--db", db, "--from-run", "-3"});
  EXPECT_EQ(negative.code, 2) << negative.text;
}

// --from-run on a database an older build wrote (schema 2: no from_run
// column, no superseded columns): the run brings it to this schema, as any run does, and records
// the origin.
TEST(Cli, FromRunWorksOnADatabaseOfTheSchemaBefore) {
  std::string db = temp_db();
  ASSERT_EQ(run_cli({"run", demo_file(), "trainer.steps=1", "--db", db}).code, 0);
  {
    SQLite::Database old(db, SQLite::OPEN_READWRITE);
    // What schemas 3 and 4 added goes, as it was not there then.
    old.exec(
        "ALTER TABLE runs DROP COLUMN from_run; ALTER TABLE metrics DROP COLUMN superseded; "
        "ALTER TABLE samples DROP COLUMN superseded; UPDATE schema_version SET version = 2;");
  }
  auto again = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db, "--from-run", "1"});
  ASSERT_EQ(again.code, 0) << again.text;
  EXPECT_EQ(rlwb::core::TrackingReader(db).run(2)->from_run, 1);
}

TEST(Cli, CtrlCStopsTheRunCleanlyAndLeavesNoWorkerBehind) {
  std::string db = temp_db();
  pid_t cli = spawn_cli({"run", demo_file(), "trainer.steps=100000", "--db", db});
  // Wait until workers run and a step has been recorded.
  ASSERT_TRUE(wait_until([&] { return worker_processes_of(cli).size() == 3; }, 60))
      << "workers never started";
  ASSERT_TRUE(wait_until(
      [&] {
        try {
          rlwb::core::TrackingReader reader(db);
          return !reader.metrics(1, 0, "perf/time_per_step").empty();
        } catch (...) {
          return false;
        }
      },
      60));
  auto workers = worker_processes_of(cli);
  kill(cli, SIGINT);
  int status = 0;
  ASSERT_TRUE(wait_until([&] { return waitpid(cli, &status, WNOHANG) == cli; }, 15)) << "rlwb ignored Ctrl-C";
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  for (pid_t w : workers) EXPECT_NE(kill(w, 0), 0) << "worker " << w << " outlived the run";
  rlwb::core::TrackingReader reader(db);
  auto run = reader.run(1);
  ASSERT_TRUE(run);
  EXPECT_EQ(run->status, "interrupted");
  EXPECT_FALSE(reader.metrics(1, 0, "perf/time_per_step").empty())
      << "metrics written before Ctrl-C were lost";
}

TEST(Cli, KilledControllerTakesItsWorkersWithIt) {
  std::string db = temp_db();
  pid_t cli = spawn_cli({"run", demo_file(), "trainer.steps=100000", "--db", db});
  ASSERT_TRUE(wait_until([&] { return worker_processes_of(cli).size() == 3; }, 60))
      << "workers never started";
  auto workers = worker_processes_of(cli);
  kill(cli, SIGKILL);
  waitpid(cli, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return worker_processes_of(cli).empty(); }, 5))
      << "orphan workers after SIGKILL";
  // The next run closes the dead one as failed.
  auto next = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db});
  EXPECT_EQ(next.code, 0) << next.text;
  rlwb::core::TrackingReader reader(db);
  EXPECT_EQ(reader.run(1)->status, "failed");
}

TEST(Cli, RunOverTcpTransportWorks) {
  std::string db = temp_db();
  auto run = run_cli({"run", demo_file(), "trainer.steps=1", "--db", db, "--transport", "tcp"});
  EXPECT_EQ(run.code, 0) << run.text;
}

// With tiny batches of one- and two-digit sums ("3+4=", "12+5=") the two
// data-parallel ranks of grpo.yaml left-pad their prompts to different
// widths (and may stop generating at different lengths); their replies are
// padded alike before they are joined (core/rpc/column_padding.h). Before
// that, the first generate failed in Batch::concat.
TEST(Cli, DataParallelRanksWhosePromptsAndResponsesDifferInWidthTrainTogether) {
  std::string db = temp_db();
  auto run = run_cli({"run", std::string(rlwb::testing::kSourceDir) + "/experiments/grpo.yaml", "--db", db,
                      "trainer.steps=3", "task.batch_size=4", "task.samples_per_prompt=2",
                      "task.max_operand=12", "trainer.warm_start.steps=2", "trainer.warm_start.batch_size=8",
                      "trainer.eval.every=3", "trainer.eval.batch_size=6", "task.test_size=6",
                      "models.actor.config.ppo.mini_batch_size=8", "models.actor.config.micro_batch_size=4"},
                     240);
  ASSERT_EQ(run.code, 0) << run.text;
  rlwb::core::TrackingReader reader(db);
  EXPECT_EQ(reader.run(1)->status, "finished");
  EXPECT_EQ(reader.run(1)->last_step, 3);
}

TEST(Cli, BadOverrideIsAClearErrorAndStartsNothing) {
  auto out = run_cli({"run", demo_file(), "trainer.stpes=3", "--db", temp_db()});
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("stpes"), std::string::npos) << out.text;
}

TEST(Cli, HelpAtEveryLevelListsItsFlagsAndExitsZero) {
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> levels = {
      {{"--help"}, {"run", "validate", "runs", "reward", "sandbox", "--version"}},
      {{"run", "--help"}, {"FILE", "--db", "--name", "--transport", "key.path=value"}},
      {{"validate", "--help"}, {"FILE", "--resolved"}},
      {{"plan", "--help"},
       {"FILE", "--devices", "--nodes", "--device-profile", "--top", "--write", "--calibrate"}},
      {{"runs", "--help"}, {"list", "show", "compare", "export"}},
      {{"runs", "list", "--help"}, {"--db"}},
      {{"runs", "show", "--help"}, {"ID", "--db"}},
      {{"runs", "compare", "--help"}, {"--metrics", "--at-step", "--keys", "--csv", "--db"}},
      {{"runs", "export", "--help"}, {"--format", "--out", "--db"}},
      {{"reward", "--help"}, {"math"}},
      {{"reward", "math", "--help"}, {"--response", "--reference", "--file", "--timeout-ms"}},
      {{"sandbox", "--help"}, {"run", "serve"}},
      {{"sandbox", "run", "--help"}, {"--lang", "--json", "--wall-ms"}},
      {{"sandbox", "serve", "--help"}, {"--endpoint", "--executors", "--max-queued"}},
  };
  for (const auto& [args, flags] : levels) {
    auto out = run_cli(args);
    EXPECT_EQ(out.code, 0) << args.front() << ": " << out.text;
    EXPECT_NE(out.out.find("Usage: rlwb"), std::string::npos) << out.text;
    for (const std::string& flag : flags)
      EXPECT_NE(out.out.find(flag), std::string::npos) << flag << " in\n" << out.out;
  }
  auto version = run_cli({"--version"});
  EXPECT_EQ(version.code, 0);
  EXPECT_EQ(version.out.rfind("rlwb ", 0), 0u) << version.out;
}

TEST(Cli, AnUnknownFlagIsExitTwoWithAMessageThatNamesIt) {
  auto run = run_cli({"run", demo_file(), "--dbb", temp_db()});
  EXPECT_EQ(run.code, 2) << run.text;
  EXPECT_NE(run.err.find("rlwb run: unknown option --dbb"), std::string::npos) << run.err;
  EXPECT_NE(run.err.find("rlwb run --help"), std::string::npos) << run.err;
  auto list = run_cli({"runs", "list", "--colour=never"});
  EXPECT_EQ(list.code, 2) << list.text;
  EXPECT_NE(list.err.find("unknown option --colour"), std::string::npos) << list.err;
  auto command = run_cli({"rnu", demo_file()});
  EXPECT_EQ(command.code, 2) << command.text;
  EXPECT_NE(command.err.find("unknown command 'rnu'"), std::string::npos) << command.err;
  auto nothing = run_cli({});
  EXPECT_EQ(nothing.code, 2) << nothing.text;
}

TEST(Cli, AMissingOrMistypedValueIsExitTwoWithAMessageThatNamesTheFlag) {
  auto db = run_cli({"run", demo_file(), "--db"});
  EXPECT_EQ(db.code, 2) << db.text;
  EXPECT_NE(db.err.find("--db"), std::string::npos) << db.err;
  auto transport = run_cli({"run", demo_file(), "--transport", "udp"});
  EXPECT_EQ(transport.code, 2) << transport.text;
  EXPECT_NE(transport.err.find("--transport"), std::string::npos) << transport.err;
  auto id = run_cli({"runs", "show", "three"});
  EXPECT_EQ(id.code, 2) << id.text;
  EXPECT_NE(id.err.find("ID"), std::string::npos) << id.err;
  auto file = run_cli({"validate"});
  EXPECT_EQ(file.code, 2) << file.text;
  EXPECT_NE(file.err.find("FILE"), std::string::npos) << file.err;
}

TEST(Cli, ValidateResolvedPrintsYamlThatLoadsBackToTheSameExperiment) {
  auto out = run_cli({"validate", "--resolved", demo_file(), "trainer.steps=7"});
  ASSERT_EQ(out.code, 0) << out.text;
  EXPECT_EQ(out.out.find(": ok ("), std::string::npos) << "the YAML, not the summary line";
  rlwb::core::Experiment expected = rlwb::core::load_experiment_file(demo_file(), {"trainer.steps=7"});
  rlwb::core::Experiment loaded = rlwb::core::load_experiment_text(out.out, "resolved.yaml");
  EXPECT_NE(out.out.find("steps: 7"), std::string::npos) << "the override is applied:\n" << out.out;
  EXPECT_EQ(rlwb::core::experiment_to_yaml(loaded), rlwb::core::experiment_to_yaml(expected));
  EXPECT_EQ(loaded.nodes.size(), expected.nodes.size());
}

TEST(Cli, ValidateResolvedOfABadFilePrintsTheProblemsToStderrOnly) {
  auto out = run_cli({"validate", "--resolved", demo_file(), "trainer.stpes=3"});
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_TRUE(out.out.empty()) << out.out;
  EXPECT_NE(out.err.find("stpes"), std::string::npos) << out.err;
}

TEST(Cli, WorkerHelpListsItsFlagsAndUsageErrorsNameTheFlag) {
  auto help = run_program(rlwb::testing::kWorkerBin, {"--help"});
  EXPECT_EQ(help.code, 0) << help.text;
  for (const char* flag :
       {"--controller", "--group", "--rank", "--world", "--device", "--store", "--shm-threshold"})
    EXPECT_NE(help.out.find(flag), std::string::npos) << flag << " in\n" << help.out;
  auto unknown = run_program(rlwb::testing::kWorkerBin, {"--controller", "ipc:///tmp/x", "--rnak", "1"});
  EXPECT_EQ(unknown.code, 2) << unknown.text;
  EXPECT_NE(unknown.err.find("unknown option --rnak"), std::string::npos) << unknown.err;
  auto missing = run_program(rlwb::testing::kWorkerBin, {"--controller"});
  EXPECT_EQ(missing.code, 2) << missing.text;
  EXPECT_NE(missing.err.find("--controller"), std::string::npos) << missing.err;
  auto rank =
      run_program(rlwb::testing::kWorkerBin, {"--controller", "ipc:///tmp/x", "--rank", "2", "--world", "2"});
  EXPECT_EQ(rank.code, 2) << rank.text;
  EXPECT_NE(rank.err.find("--rank"), std::string::npos) << rank.err;
  auto store =
      run_program(rlwb::testing::kWorkerBin, {"--controller", "ipc:///tmp/x", "--store", "localhost"});
  EXPECT_EQ(store.code, 2) << store.text;
  EXPECT_NE(store.err.find("--store expects HOST:PORT"), std::string::npos) << store.err;
}

}  // namespace
