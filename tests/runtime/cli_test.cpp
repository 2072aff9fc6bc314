// The rlwb command line as a user runs it: validate, run, runs list/show,
// Ctrl-C in the middle of a run, and a controller killed with SIGKILL --
// in every case no worker process may outlive the run.
#include "core/tracking/tracking.h"
#include "runtime_test_support.h"

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

struct Output {
  int code = -1;
  std::string text;  // stdout + stderr
};

// Runs rlwb with a bounded wait; output goes to a temp file.
Output run_cli(const std::vector<std::string>& args, int timeout_s = 120) {
  std::string out_path = "/tmp/" + rlwb::testing::unique_name("rlwb-cli") + ".out";
  pid_t pid = fork();
  if (pid == 0) {
    FILE* f = freopen(out_path.c_str(), "w", stdout);
    dup2(fileno(f), STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(RLWB_CLI_BIN)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(RLWB_CLI_BIN, argv.data());
    _exit(127);
  }
  int status = 0;
  auto deadline = Clock::now() + std::chrono::seconds(timeout_s);
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (Clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      ADD_FAILURE() << "rlwb did not finish within " << timeout_s << " s";
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::ifstream in(out_path);
  std::stringstream ss;
  ss << in.rdbuf();
  std::remove(out_path.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), ss.str()};
}

// rlwb-worker processes whose --controller address names the given
// controller pid (the controller's ipc socket is /tmp/rlwb-<pid>-...).
std::vector<pid_t> workers_of(pid_t controller) {
  std::vector<pid_t> found;
  std::string needle = "/tmp/rlwb-" + std::to_string(controller) + "-";
  for (auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::string name = entry.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream cmd(entry.path() / "cmdline");
    std::string cmdline((std::istreambuf_iterator<char>(cmd)), {});
    if (cmdline.find("rlwb-worker") != std::string::npos && cmdline.find(needle) != std::string::npos) {
      // A zombie has no cmdline, so whatever matched is alive.
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

bool wait_until(const std::function<bool()>& condition, double seconds) {
  auto deadline = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return condition();
}

std::string demo_file() { return std::string(RLWB_SOURCE_DIR) + "/experiments/demo.yaml"; }
std::string temp_db() { return "/tmp/" + rlwb::testing::unique_name("rlwb-cli") + ".db"; }

pid_t spawn_cli(const std::vector<std::string>& args) {
  pid_t pid = fork();
  if (pid == 0) {
    int devnull = open("/dev/null", O_WRONLY);
    dup2(devnull, STDOUT_FILENO);
    dup2(devnull, STDERR_FILENO);
    std::vector<char*> argv{const_cast<char*>(RLWB_CLI_BIN)};
    for (auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(RLWB_CLI_BIN, argv.data());
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

TEST(Cli, CtrlCStopsTheRunCleanlyAndLeavesNoWorkerBehind) {
  std::string db = temp_db();
  pid_t cli = spawn_cli({"run", demo_file(), "trainer.steps=100000", "--db", db});
  // Wait until workers run and a step has been recorded.
  ASSERT_TRUE(wait_until([&] { return workers_of(cli).size() == 3; }, 60)) << "workers never started";
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
  auto workers = workers_of(cli);
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
  EXPECT_FALSE(reader.metrics(1, 0, "perf/time_per_step").empty()) << "metrics written before Ctrl-C were lost";
}

TEST(Cli, KilledControllerTakesItsWorkersWithIt) {
  std::string db = temp_db();
  pid_t cli = spawn_cli({"run", demo_file(), "trainer.steps=100000", "--db", db});
  ASSERT_TRUE(wait_until([&] { return workers_of(cli).size() == 3; }, 60)) << "workers never started";
  auto workers = workers_of(cli);
  kill(cli, SIGKILL);
  waitpid(cli, nullptr, 0);
  EXPECT_TRUE(wait_until([&] { return workers_of(cli).empty(); }, 5)) << "orphan workers after SIGKILL";
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

TEST(Cli, BadOverrideIsAClearErrorAndStartsNothing) {
  auto out = run_cli({"run", demo_file(), "trainer.stpes=3", "--db", temp_db()});
  EXPECT_EQ(out.code, 1) << out.text;
  EXPECT_NE(out.text.find("stpes"), std::string::npos) << out.text;
}

}  // namespace
