#include <future>
#include <mutex>

#include "sandbox/classify.h"
#include "sandbox/program_runner.h"
#include "sandbox/sandbox.h"

namespace rlwb::sandbox {

LocalSandbox::LocalSandbox(PoolOptions options) : pool_(options) {}

Verdict LocalSandbox::run(const RunRequest& request) {
  return run_with([this](const ExecJob& j) { return pool_.exec(j); }, request);
}

JudgeResult LocalSandbox::judge(const JudgeRequest& request) {
  // One executor for the whole judgement: its tests run back to back.
  auto lease = pool_.acquire(std::chrono::minutes(10));
  if (!lease) {
    JudgeResult r;
    r.total = static_cast<int>(request.tests.size());
    r.detail = "no sandbox executor became free in time";
    return r;
  }
  Executor* e = lease.get();
  return judge_with([e](const ExecJob& j) { return e->exec(j); }, request);
}

std::vector<JudgeResult> LocalSandbox::judge_all(const std::vector<JudgeRequest>& requests) {
  std::vector<std::future<JudgeResult>> futures;
  std::vector<JudgeResult> results(requests.size());
  // One thread per executor, each taking the next request.
  std::atomic<size_t> next{0};
  std::mutex error_mu;
  std::exception_ptr error;
  auto worker = [&] {
    for (size_t i; (i = next++) < requests.size();) {
      try {
        results[i] = judge(requests[i]);
      } catch (...) {
        std::lock_guard lock(error_mu);
        if (!error) error = std::current_exception();
      }
    }
  };
  size_t threads = std::min<size_t>(requests.size(), static_cast<size_t>(pool_.size()));
  for (size_t t = 0; t < threads; ++t)
    futures.push_back(std::async(std::launch::async, [&] {
      worker();
      return JudgeResult{};
    }));
  for (auto& f : futures) f.get();
  if (error) std::rethrow_exception(error);
  return results;
}

Verdict LocalSandbox::compile(Language lang, const std::string& source, std::string& binary,
                              const Limits& limits) {
  const LanguageSpec& spec = language_spec(lang);
  if (!is_compiled(lang)) throw SandboxError(std::string(language_name(lang)) + " is not compiled");
  ExecJob job;
  job.argv = spec.compile_argv;
  job.files = {{spec.source_file, source, false}};
  job.limits = limits;
  job.collect = spec.binary_file;
  ExecResult r = pool_.exec(job);
  binary = std::move(r.artifact);
  return classify(std::move(r), limits, Phase::compile);
}

Verdict LocalSandbox::run_binary(const std::string& binary, const std::string& stdin_data,
                                 const Limits& limits) {
  const LanguageSpec& spec = language_spec(Language::c);
  ExecJob job;
  job.argv = spec.run_argv;
  job.files = {{spec.binary_file, binary, true}};
  job.stdin_data = stdin_data;
  job.limits = limits;
  return classify(pool_.exec(job), limits, Phase::run);
}

JudgeResult judge(const std::string& program, Language lang, const std::vector<TestCase>& tests,
                  const JudgeOptions& options) {
  static std::once_flag once;
  static std::unique_ptr<LocalSandbox> box;
  std::call_once(once, [] { box = std::make_unique<LocalSandbox>(); });
  return box->judge({lang, program, tests, options});
}

}  // namespace rlwb::sandbox
