// The sandbox as the code reward sees it. Start here.
//
//   // in-process: a pool of executor processes owned by this process
//   rlwb::sandbox::LocalSandbox box;
//   Verdict v = box.run({Language::python3, "print(6*7)"});        // v.stdout_data == "42\n"
//   JudgeResult r = box.judge({Language::cpp, source, {TestCase::io("2 3\n", "5\n")}});
//
//   // or the rlwb-sandbox service (client.h): same interface
//   rlwb::sandbox::SandboxClient client("ipc:///tmp/rlwb-sandbox.sock");
//   std::vector<JudgeResult> rs = client.judge_all(requests);
//
//   // or one call on a process-wide local sandbox
//   JudgeResult r = rlwb::sandbox::judge(program, Language::python3, tests);
//
// Programs never make these calls throw: what a program does ends in a
// Verdict. They throw SandboxError for bad input (no tests, limits out of
// range) and when no sandbox can be built at all (not root, kernel refuses).
// A sandbox failure during a job comes back as Outcome::sandbox_error.
#pragma once

#include <memory>
#include <vector>

#include "sandbox/executor_pool.h"
#include "sandbox/requests.h"
#include "sandbox/sandbox_error.h"
#include "sandbox/verdict.h"

namespace rlwb::sandbox {

class Sandbox {
 public:
  virtual ~Sandbox() = default;
  virtual Verdict run(const RunRequest& request) = 0;
  virtual JudgeResult judge(const JudgeRequest& request) = 0;
  // Many at once, answered in order; implementations overlap them.
  virtual std::vector<JudgeResult> judge_all(const std::vector<JudgeRequest>& requests) = 0;
};

// Runs jobs on executor processes forked from this process. Fork early
// (before the process grows large): each executor keeps a copy-on-write
// image of the process that started it. A large process such as the
// controller should use the service instead.
class LocalSandbox : public Sandbox {
 public:
  explicit LocalSandbox(PoolOptions options = {});
  Verdict run(const RunRequest& request) override;
  JudgeResult judge(const JudgeRequest& request) override;
  std::vector<JudgeResult> judge_all(const std::vector<JudgeRequest>& requests) override;

  ExecutorPool& pool() { return pool_; }
  // Compiles once (C, C++) for callers that run the same binary many times
  // (benchmarks); `binary` then goes into run_binary().
  Verdict compile(Language lang, const std::string& source, std::string& binary,
                  const Limits& limits = default_compile_limits());
  Verdict run_binary(const std::string& binary, const std::string& stdin_data,
                     const Limits& limits = default_run_limits());

 private:
  ExecutorPool pool_;
};

// judge() on a LocalSandbox created at the first call (one executor per CPU).
JudgeResult judge(const std::string& program, Language lang, const std::vector<TestCase>& tests,
                  const JudgeOptions& options = {});

}  // namespace rlwb::sandbox
