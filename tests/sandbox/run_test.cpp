// Running programs: every language, stdin, exit codes and signals, output
// caps, and what each verdict is made of. Plus the pure parts (limits,
// verdict JSON, classification rules) without a sandbox.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sandbox/classify.h"
#include "sandbox/program_runner.h"
#include "tests/sandbox/sandbox_test_util.h"
#include "tests/test_paths.h"

namespace rlwb::sandbox::testing {
namespace {

using ::testing::HasSubstr;

TEST(SandboxRunTest, Python3IsDebiansInterpreter) {
  Verdict v = run_program(Language::python3, "import sys\nprint(sys.executable, sys.version_info[:2])\n");
  ASSERT_TRUE(v.ok()) << v.detail << v.stderr_data;
  EXPECT_THAT(v.stdout_data, HasSubstr("/usr/bin/python3"));
  EXPECT_THAT(v.stdout_data, ::testing::Not(HasSubstr("pyenv")));
}

TEST(SandboxRunTest, EachLanguageReadsStdinAndWritesStdout) {
  struct Case {
    Language lang;
    const char* program;
  } cases[] = {
      {Language::python3, "a, b = map(int, input().split())\nprint(a + b)\n"},
      {Language::bash, "read a b\necho $((a + b))\n"},
      {Language::c,
       "#include <stdio.h>\nint main(void) { int a, b; scanf(\"%d %d\", &a, &b); printf(\"%d\\n\", "
       "a + b); }\n"},
      {Language::cpp,
       "#include <iostream>\nint main() { long a, b; std::cin >> a >> b; std::cout << a + b << "
       "'\\n'; }\n"},
  };
  for (const Case& c : cases) {
    Verdict v = run_program(c.lang, c.program, quick_limits(), "40 2\n");
    EXPECT_EQ(v.outcome, Outcome::ok) << language_name(c.lang) << ": " << v.detail << v.stderr_data;
    EXPECT_EQ(v.stdout_data, "42\n") << language_name(c.lang);
    EXPECT_EQ(v.exit_code, 0);
    EXPECT_GT(v.wall_ms, 0);
    EXPECT_GT(v.peak_memory_kb, 0);
    EXPECT_FALSE(v.fallbacks.empty()) << "this kernel has no cgroup v2: the verdict must say so";
  }
}

TEST(SandboxRunTest, NonZeroExitIsARuntimeErrorWithItsCode) {
  Verdict v = run_program(Language::python3, "import sys\nprint('partial')\nsys.exit(3)\n");
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_EQ(v.exit_code, 3);
  EXPECT_EQ(v.stdout_data, "partial\n");
  EXPECT_THAT(v.detail, HasSubstr("code 3"));
}

TEST(SandboxRunTest, ExceptionTracebackGoesToStderr) {
  Verdict v = run_program(Language::python3, "def f():\n    return 1 / 0\nf()\n");
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_EQ(v.exit_code, 1);
  EXPECT_THAT(v.stderr_data, HasSubstr("ZeroDivisionError"));
  EXPECT_THAT(v.stderr_data, HasSubstr("main.py\", line 2"));
}

TEST(SandboxRunTest, SignalIsReportedByNumber) {
  Verdict v = run_program(Language::c, "int main(void) { volatile int* p = 0; return *p; }\n");
  EXPECT_EQ(v.outcome, Outcome::runtime_error);
  EXPECT_EQ(v.signal, SIGSEGV);
  EXPECT_THAT(v.detail, HasSubstr("SIGSEGV"));
  Verdict a = run_program(Language::cpp, "#include <cstdlib>\nint main() { std::abort(); }\n");
  EXPECT_EQ(a.signal, SIGABRT);
}

TEST(SandboxRunTest, CompileErrorCarriesTheDiagnostics) {
  Verdict v = run_program(Language::c, "int main(void) { return undefined_name; }\n");
  EXPECT_EQ(v.outcome, Outcome::compile_error);
  EXPECT_THAT(v.stderr_data, HasSubstr("undefined_name"));
  Verdict cpp = run_program(Language::cpp, "int main() { std::vector<int> v; }\n");
  EXPECT_EQ(cpp.outcome, Outcome::compile_error);
}

TEST(SandboxRunTest, StderrBeyondItsCapIsTruncatedNotFatal) {
  Limits l = quick_limits();
  l.stderr_bytes = 1000;
  Verdict v =
      run_program(Language::python3, "import sys\nsys.stderr.write('e' * 100000)\nprint('done')\n", l);
  EXPECT_EQ(v.outcome, Outcome::ok);
  EXPECT_EQ(v.stderr_data.size(), 1000u);
  EXPECT_TRUE(v.stderr_truncated);
  EXPECT_EQ(v.stdout_data, "done\n");
}

TEST(SandboxRunTest, WorkDirIsPrivateWritableAndFreshEachRun) {
  Verdict a = run_program(Language::bash, "pwd; ls -A; echo secret > note; ls -A\n");
  EXPECT_EQ(a.stdout_data, "/tmp\nmain.sh\nmain.sh\nnote\n");
  Verdict b = run_program(Language::bash, "ls -A; cat note 2>&1\n");
  EXPECT_THAT(b.stdout_data, ::testing::Not(HasSubstr("secret")));
}

// Every sandbox starts as a copy of its executor process, so the executor
// is the small static rlwb-sandbox-executor (built next to rlwb-sandbox),
// not rlwb-sandbox with ZeroMQ and its ~20 libraries.
TEST(SandboxRunTest, ExecutorsRunTheSmallExecutorProgram) {
  const std::string small =
      std::filesystem::path(rlwb::testing::kSandboxBin).parent_path() / "rlwb-sandbox-executor";
  if (::access(small.c_str(), X_OK) != 0) GTEST_SKIP() << small << " is not built";
  for (pid_t pid : shared_sandbox().pool().pids()) {
    std::error_code ec;
    auto exe = std::filesystem::read_symlink("/proc/" + std::to_string(pid) + "/exe", ec);
    EXPECT_EQ(exe.filename(), "rlwb-sandbox-executor") << pid;
    std::ifstream maps("/proc/" + std::to_string(pid) + "/maps");
    int regions = 0;
    for (std::string l; std::getline(maps, l);) ++regions;
    EXPECT_LT(regions, 40) << "executor " << pid << " maps " << regions << " regions";
  }
}

TEST(SandboxRunTest, WorkDirSizeIsPerJob) {
  Limits l = quick_limits();
  l.work_dir_mb = 1;
  Verdict v =
      run_program(Language::bash, "head -c 3000000 /dev/zero > big; echo $?; df -k /tmp | tail -1\n", l);
  EXPECT_EQ(v.outcome, Outcome::ok);
  EXPECT_THAT(v.stderr_data, HasSubstr("No space left on device"));
  Verdict big = run_program(Language::bash, "head -c 3000000 /dev/zero > big && echo wrote\n");
  EXPECT_EQ(big.stdout_data, "wrote\n") << "the next job has the default size again";
}

TEST(SandboxRunTest, StdinMayBeLargeAndBinary) {
  std::string data(5 << 20, '\0');
  for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<char>(i * 7);
  Verdict v =
      run_program(Language::python3,
                  "import sys, hashlib\nprint(hashlib.sha256(sys.stdin.buffer.read()).hexdigest()[:16], "
                  "end='')\n",
                  quick_limits(), data);
  ASSERT_TRUE(v.ok()) << v.stderr_data;
  EXPECT_EQ(v.stdout_data.size(), 16u);
}

TEST(SandboxRunTest, BadInputIsRefusedWithAClearError) {
  EXPECT_THROW(parse_language("rust"), SandboxError);
  try {
    parse_language("ruby");
  } catch (const SandboxError& e) {
    EXPECT_THAT(e.what(), HasSubstr("use python3, bash, c or cpp"));
  }
  RunRequest r;
  r.program = "print(1)";
  r.limits.wall_ms = 0;
  try {
    shared_sandbox().run(r);
    ADD_FAILURE() << "a zero wall limit was accepted";
  } catch (const SandboxError& e) {
    EXPECT_THAT(e.what(), HasSubstr("limits.wall_ms = 0"));
  }
}

// ---- pure parts ----

TEST(SandboxLimitsTest, JsonRoundTripAndUnknownKeys) {
  Limits l;
  l.wall_ms = 1234;
  l.stdout_bytes = 99;
  Limits back = limits_from_json(limits_to_json(l), Limits{});
  EXPECT_EQ(back.wall_ms, 1234);
  EXPECT_EQ(back.stdout_bytes, 99);
  EXPECT_THROW(limits_from_json(nlohmann::json{{"wal_ms", 5}}, Limits{}), SandboxError);
  EXPECT_THROW(limits_from_json(nlohmann::json{{"wall_ms", "5"}}, Limits{}), SandboxError);
  EXPECT_THROW(limits_from_json(nlohmann::json{{"memory_mb", 1 << 30}}, Limits{}), SandboxError);
}

TEST(SandboxVerdictTest, JsonRoundTripKeepsEverythingAndReplacesBadUtf8) {
  Verdict v;
  v.outcome = Outcome::memory_limit;
  v.detail = "d";
  v.exit_code = 1;
  v.signal = 9;
  v.stdout_data = "ok\xff";
  v.stderr_data = "err";
  v.wall_ms = 1.5;
  v.cpu_ms = 2.5;
  v.peak_memory_kb = 77;
  v.fallbacks = {"x"};
  nlohmann::json j = verdict_to_json(v);
  EXPECT_EQ(j["verdict"], "memory_limit");
  std::string text = j.dump();  // must not throw on the invalid byte
  Verdict back = verdict_from_json(nlohmann::json::parse(text));
  EXPECT_EQ(back.outcome, Outcome::memory_limit);
  EXPECT_EQ(back.signal, 9);
  EXPECT_EQ(back.peak_memory_kb, 77);
  EXPECT_EQ(back.stdout_data, "ok\xEF\xBF\xBD");
  EXPECT_EQ(back.fallbacks, std::vector<std::string>{"x"});
  for (int o = 0; o <= static_cast<int>(Outcome::sandbox_error); ++o)
    EXPECT_EQ(parse_outcome(outcome_name(static_cast<Outcome>(o))), static_cast<Outcome>(o));
}

ExecResult exited(int code, const std::string& err = "") {
  ExecResult r;
  r.started = true;
  r.exit_code = code;
  r.stderr_data = err;
  return r;
}

TEST(SandboxClassifyTest, RulesInOrder) {
  Limits l;
  EXPECT_EQ(classify(exited(0), l).outcome, Outcome::ok);
  EXPECT_EQ(classify(exited(2), l).outcome, Outcome::runtime_error);
  EXPECT_EQ(classify(exited(1, "MemoryError"), l).outcome, Outcome::memory_limit);
  EXPECT_EQ(classify(exited(0, "MemoryError"), l).outcome, Outcome::ok)
      << "stderr text alone never fails a run";
  EXPECT_EQ(classify(exited(1, "OSError: [Errno 27] File too large"), l).outcome, Outcome::output_limit);
  ExecResult sig = exited(-1);
  sig.signal = SIGSYS;
  EXPECT_EQ(classify(ExecResult(sig), l).outcome, Outcome::policy_violation);
  sig.signal = SIGXCPU;
  EXPECT_EQ(classify(ExecResult(sig), l).outcome, Outcome::timeout);
  sig.signal = SIGXFSZ;
  EXPECT_EQ(classify(ExecResult(sig), l).outcome, Outcome::output_limit);
  ExecResult big = exited(0);
  big.max_rss_kb = int64_t(l.memory_mb) * 1024 + 1;
  EXPECT_EQ(classify(std::move(big), l).outcome, Outcome::memory_limit)
      << "peak over the limit fails even on exit 0";
  ExecResult wall = exited(0);
  wall.stop = StopReason::wall;
  EXPECT_EQ(classify(std::move(wall), l).outcome, Outcome::timeout);
  ExecResult out = exited(0);
  out.stop = StopReason::output;
  EXPECT_EQ(classify(std::move(out), l).outcome, Outcome::output_limit);
  ExecResult broken;
  broken.sandbox_error = "boom";
  EXPECT_EQ(classify(std::move(broken), l).outcome, Outcome::sandbox_error);
  EXPECT_EQ(classify(exited(1), l, Phase::compile).outcome, Outcome::compile_error);
  ExecResult killed_compiler = exited(-1);
  killed_compiler.signal = SIGSYS;
  EXPECT_EQ(classify(std::move(killed_compiler), l, Phase::compile).outcome, Outcome::sandbox_error);
}

}  // namespace
}  // namespace rlwb::sandbox::testing

namespace rlwb::sandbox::testing {
namespace {

// With one executor the order is fixed: after a bash job the next sandbox
// is plain (python3 starts cold); after a python3 job the next one has a
// pre-started interpreter. Both must look the same to the program.
TEST(SandboxRunTest, PreStartedInterpreterBehavesLikeAColdStart) {
  PoolOptions o;
  o.executors = 1;
  o.executor.host_id_base = host_id_base() + 2;
  LocalSandbox box(o);
  const std::string program =
      "import sys, os\n"
      "print(__name__, __file__, sys.argv, sys.path[0], os.getcwd())\n"
      "print(sys.stdin.read().upper())\n"
      "print(sorted(k for k in globals() if not k.startswith('__')))\n"
      "def f():\n    raise ValueError('boom')\n"
      "f()\n";
  auto run = [&](Language lang, const std::string& src) {
    RunRequest r;
    r.language = lang;
    r.program = src;
    r.stdin_data = "some input";
    r.limits = quick_limits();
    return box.run(r);
  };
  ASSERT_TRUE(run(Language::bash, "true").ok());
  Verdict cold = run(Language::python3, program);
  Verdict warm = run(Language::python3, program);
  Verdict warm2 = run(Language::python3, program);
  for (const Verdict* v : {&cold, &warm, &warm2}) {
    EXPECT_EQ(v->outcome, Outcome::runtime_error);
    EXPECT_EQ(v->exit_code, 1);
  }
  EXPECT_EQ(cold.stdout_data,
            "__main__ /tmp/main.py ['/tmp/main.py'] /tmp /tmp\nSOME INPUT\n['os', 'sys']\n");
  EXPECT_EQ(warm.stdout_data, cold.stdout_data);
  EXPECT_EQ(warm.stderr_data, cold.stderr_data);
  EXPECT_EQ(warm2.stdout_data, cold.stdout_data);
  EXPECT_THAT(cold.stderr_data,
              HasSubstr("Traceback (most recent call last):\n  File \"/tmp/main.py\", line 7"));

  Verdict syntax_cold, syntax_warm;
  ASSERT_TRUE(run(Language::bash, "true").ok());
  syntax_cold = run(Language::python3, "print(1\n");
  syntax_warm = run(Language::python3, "print(1\n");
  EXPECT_EQ(syntax_cold.outcome, Outcome::runtime_error);
  EXPECT_EQ(syntax_warm.exit_code, syntax_cold.exit_code);
  EXPECT_EQ(syntax_warm.stderr_data, syntax_cold.stderr_data);

  Verdict exit_warm = run(Language::python3, "import sys\nsys.exit(5)\n");
  EXPECT_EQ(exit_warm.exit_code, 5);
  // Limits apply to the pre-started interpreter too.
  RunRequest hog;
  hog.program = "x = bytearray(1 << 34)";
  hog.limits = quick_limits();
  EXPECT_EQ(box.run(hog).outcome, Outcome::memory_limit);
  hog.program = "while True: pass";
  EXPECT_EQ(box.run(hog).outcome, Outcome::timeout);
}

}  // namespace
}  // namespace rlwb::sandbox::testing
