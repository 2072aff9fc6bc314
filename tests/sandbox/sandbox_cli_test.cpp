// The command line: rlwb-sandbox run/serve, and `rlwb sandbox` when the rlwb
// CLI is built. Exit status 0 whatever the verdict, 1 when the sandbox
// failed, 2 on bad usage; --json prints one JSON object.
#include <fcntl.h>
#include <gmock/gmock.h>
#include <poll.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/sandbox/service_process.h"
#include "tests/test_paths.h"

namespace rlwb::sandbox::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

struct Output {
  int status = -1;
  std::string out, err;
};

// Runs argv with a bounded wait (kills it after 60 s).
Output run_cli(std::vector<std::string> argv) {
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) return {};
  pid_t pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    dup2(err[1], 2);
    std::vector<char*> a;
    for (auto& s : argv) a.push_back(s.data());
    a.push_back(nullptr);
    execv(a[0], a.data());
    _exit(127);
  }
  close(out[1]);
  close(err[1]);
  Output o;
  pollfd p[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  auto until = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  int open_pipes = 2;
  char buf[4096];
  while (open_pipes > 0 && std::chrono::steady_clock::now() < until) {
    if (poll(p, 2, 1000) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (!p[i].revents) continue;
      ssize_t n = read(p[i].fd, buf, sizeof buf);
      if (n <= 0) {
        p[i].fd = -1;
        --open_pipes;
      } else {
        (i == 0 ? o.out : o.err).append(buf, static_cast<size_t>(n));
      }
    }
  }
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  o.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  close(out[0]);
  close(err[0]);
  return o;
}

// Files in /tmp for one test, removed when it ends.
class TempFiles {
 public:
  ~TempFiles() {
    for (auto& p : paths_) std::remove(p.c_str());
  }
  std::string write(const std::string& name, const std::string& content) {
    paths_.push_back("/tmp/rlwb-cli-test-" + std::to_string(getpid()) + "-" + name);
    std::ofstream(paths_.back()) << content;
    return paths_.back();
  }

 private:
  std::vector<std::string> paths_;
};

TEST(SandboxCliTest, RunPrintsOneJsonVerdictAndExitsZero) {
  TempFiles tmp;
  std::string prog = tmp.write("sum.py", "a, b = map(int, input().split())\nprint(a + b)\n");
  std::string in = tmp.write("in.txt", "40 2\n");
  Output o = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "python3", prog, "--stdin", in, "--json"});
  EXPECT_EQ(o.status, 0) << o.err;
  auto j = nlohmann::json::parse(o.out);
  EXPECT_EQ(j["verdict"], "ok");
  EXPECT_EQ(j["stdout"], "42\n");
  EXPECT_EQ(j["exit_code"], 0);
  EXPECT_TRUE(j.contains("wall_ms") && j.contains("cpu_ms") && j.contains("peak_memory_kb") &&
              j.contains("fallbacks"));
  EXPECT_EQ(std::count(o.out.begin(), o.out.end(), '\n'), 1) << "exactly one JSON line";
}

TEST(SandboxCliTest, FailingProgramStillExitsZero) {
  TempFiles tmp;
  std::string prog = tmp.write("crash.c", "int main(void) { volatile int* p = 0; return *p; }\n");
  Output o = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "c", prog});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_THAT(o.out, HasSubstr("verdict: runtime_error"));
  EXPECT_THAT(o.out, HasSubstr("SIGSEGV"));
  std::string bad = tmp.write("bad.cpp", "int main() { return nope; }\n");
  Output c = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "cpp", bad, "--json"});
  EXPECT_EQ(c.status, 0);
  EXPECT_EQ(nlohmann::json::parse(c.out)["verdict"], "compile_error");
}

TEST(SandboxCliTest, BadUsageIsExitTwoWithAClearMessage) {
  TempFiles tmp;
  std::string prog = tmp.write("x.py", "print(1)\n");
  Output lang = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "ruby", prog});
  EXPECT_EQ(lang.status, 2);
  EXPECT_THAT(lang.err, HasSubstr("unknown language 'ruby'"));
  Output missing = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "python3", "/nonexistent/prog.py"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("cannot read program file '/nonexistent/prog.py'"));
  Output option = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "python3", prog, "--wal-ms", "5"});
  EXPECT_EQ(option.status, 2);
  EXPECT_THAT(option.err, HasSubstr("unknown option --wal-ms"));
  Output limit = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "python3", prog, "--wall-ms", "0"});
  EXPECT_EQ(limit.status, 2);
  EXPECT_THAT(limit.err, HasSubstr("limits.wall_ms = 0"));
  Output command = run_cli({rlwb::testing::kSandboxBin, "fly"});
  EXPECT_EQ(command.status, 2);
  EXPECT_THAT(command.err, HasSubstr("unknown command 'fly'"));
}

TEST(SandboxCliTest, HelpAtEveryLevelListsTheFlagsAndExitsZero) {
  Output top = run_cli({rlwb::testing::kSandboxBin, "--help"});
  EXPECT_EQ(top.status, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("run"));
  EXPECT_THAT(top.out, HasSubstr("serve"));
  EXPECT_THAT(top.out, Not(HasSubstr("--executor"))) << "the executor mode is not for people";
  Output run = run_cli({rlwb::testing::kSandboxBin, "run", "--help"});
  EXPECT_EQ(run.status, 0) << run.err;
  for (const char* flag : {"FILE", "--lang", "--stdin", "--json", "--endpoint", "--wall-ms", "--cpu-ms",
                           "--memory-mb", "--timeout-ms"})
    EXPECT_THAT(run.out, HasSubstr(flag));
  Output serve = run_cli({rlwb::testing::kSandboxBin, "serve", "--help"});
  EXPECT_EQ(serve.status, 0) << serve.err;
  for (const char* flag : {"--endpoint", "--executors", "--max-queued"})
    EXPECT_THAT(serve.out, HasSubstr(flag));
}

TEST(SandboxCliTest, AMissingOrMistypedValueIsExitTwoAndNamesTheFlag) {
  TempFiles tmp;
  std::string prog = tmp.write("v.py", "print(1)\n");
  Output missing = run_cli({rlwb::testing::kSandboxBin, "run", prog, "--lang"});
  EXPECT_EQ(missing.status, 2);
  EXPECT_THAT(missing.err, HasSubstr("--lang"));
  Output typed = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "python3", prog, "--cpu-ms", "lots"});
  EXPECT_EQ(typed.status, 2);
  EXPECT_THAT(typed.err, HasSubstr("--cpu-ms"));
  Output executors = run_cli({rlwb::testing::kSandboxBin, "serve", "--executors", "-1"});
  EXPECT_EQ(executors.status, 2);
  EXPECT_THAT(executors.err, HasSubstr("--executors"));
  Output no_command = run_cli({rlwb::testing::kSandboxBin});
  EXPECT_EQ(no_command.status, 2);
}

TEST(SandboxCliTest, RunOnAServiceAndSandboxErrorIsExitOne) {
  TempFiles tmp;
  ServiceProcess service(1);
  std::string prog = tmp.write("hello.sh", "echo hello from the service\n");
  Output o = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "bash", prog, "--endpoint",
                      service.endpoint(), "--json"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["stdout"], "hello from the service\n");
  service.stop();
  // Nobody answers any more: the sandbox failed, not the program.
  Output gone = run_cli({rlwb::testing::kSandboxBin, "run", "--lang", "bash", prog, "--endpoint",
                         service.endpoint(), "--timeout-ms", "500", "--json"});
  EXPECT_EQ(gone.status, 1);
  auto j = nlohmann::json::parse(gone.out);
  EXPECT_EQ(j["verdict"], "sandbox_error");
  EXPECT_THAT(j["detail"].get<std::string>(), HasSubstr("no reply from the sandbox service"));
}

TEST(SandboxCliTest, RlwbSandboxCommandWhenTheCliIsBuilt) {
  TempFiles tmp;
  if (access(rlwb::testing::kCliBin, X_OK) != 0) GTEST_SKIP() << "rlwb is not built in this build tree";
  std::string prog = tmp.write("cli.py", "print(6 * 7)\n");
  Output o = run_cli({rlwb::testing::kCliBin, "sandbox", "run", "--lang", "python3", prog, "--json"});
  EXPECT_EQ(o.status, 0) << o.err;
  EXPECT_EQ(nlohmann::json::parse(o.out)["stdout"], "42\n");
  Output before = run_cli({rlwb::testing::kCliBin, "sandbox", "run", "--json", prog, "--lang", "python3"});
  EXPECT_EQ(before.status, 0) << before.err;
  EXPECT_EQ(nlohmann::json::parse(before.out)["verdict"], "ok");
  Output usage = run_cli({rlwb::testing::kCliBin, "sandbox", "run", "--lang", "cobol", prog});
  EXPECT_EQ(usage.status, 2);
}

}  // namespace
}  // namespace rlwb::sandbox::testing
