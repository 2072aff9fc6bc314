#include "sandbox/cli.h"

#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "sandbox/client.h"
#include "sandbox/sandbox.h"
#include "sandbox/service.h"

namespace rlwb::sandbox {
namespace {

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw core::UsageError(std::string("cannot read ") + what + " '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Accepts the names parse_language accepts, with its message otherwise.
const CLI::Validator kLanguageName(
    [](std::string& name) -> std::string {
      try {
        parse_language(name);
        return "";
      } catch (const SandboxError& e) {
        return e.what();
      }
    },
    "python3|bash|c|cpp");

struct RunArgs {
  std::string lang, file, stdin_file, endpoint;
  bool json = false;
  Limits limits;
  std::optional<int> timeout_ms;
};

int run_command(const RunArgs& a, std::ostream& out) {
  RunRequest req;
  req.language = parse_language(a.lang);
  req.program = read_file(a.file, "program file");
  if (!a.stdin_file.empty()) req.stdin_data = read_file(a.stdin_file, "stdin file");
  req.limits = a.limits;
  try {
    validate_limits(req.limits, "limits");
  } catch (const SandboxError& e) {
    throw core::UsageError(e.what());
  }
  Verdict v;
  if (!a.endpoint.empty()) {
    // Bound the wait: the run's own limits plus room for queueing.
    int fallback = req.limits.wall_ms + (is_compiled(req.language) ? req.compile_limits.wall_ms : 0) + 60000;
    ClientOptions co;
    co.timeout = std::chrono::milliseconds(a.timeout_ms.value_or(fallback));
    v = SandboxClient(a.endpoint, co).run(req);
  } else {
    PoolOptions pool;
    pool.executors = 1;
    v = LocalSandbox(pool).run(req);
  }
  if (a.json)
    out << verdict_to_json(v).dump() << "\n";
  else
    out << describe(v);
  return v.outcome == Outcome::sandbox_error ? 1 : 0;
}

}  // namespace

std::vector<core::Subcommand> add_sandbox_commands(CLI::App& parent, std::ostream& out, std::ostream& log) {
  auto run_args = std::make_shared<RunArgs>();
  CLI::App* run = parent.add_subcommand("run", "run FILE once in a fresh sandbox and print the verdict");
  run->footer(
      "Exit status 0 whatever the verdict, 1 if the sandbox itself failed, 2 for bad usage. "
      "In-process unless --endpoint names a service.");
  run->add_option("--lang", run_args->lang, "the program's language")->required()->check(kLanguageName);
  run->add_option("FILE", run_args->file, "the program")->required();
  run->add_option("--stdin", run_args->stdin_file, "a file for the program's standard input");
  run->add_flag("--json", run_args->json, "print the verdict as one JSON object");
  run->add_option("--endpoint", run_args->endpoint,
                  "run on this sandbox service (ipc://PATH or tcp://HOST:PORT)");
  run->add_option("--wall-ms", run_args->limits.wall_ms, "wall-clock limit")->capture_default_str();
  run->add_option("--cpu-ms", run_args->limits.cpu_ms, "CPU time limit")->capture_default_str();
  run->add_option("--memory-mb", run_args->limits.memory_mb, "memory limit")->capture_default_str();
  run->add_option("--timeout-ms", run_args->timeout_ms,
                  "with --endpoint: how long to wait for the answer (default: the limits + 60 s)")
      ->check(CLI::PositiveNumber);

  auto serve_args = std::make_shared<ServiceOptions>();
  CLI::App* serve =
      parent.add_subcommand("serve", "serve run/judge requests over ZeroMQ until SIGINT/SIGTERM");
  serve->add_option("--endpoint", serve_args->endpoint, "where to listen")->capture_default_str();
  serve->add_option("--executors", serve_args->pool.executors, "executor processes (0: one per CPU)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  serve
      ->add_option("--max-queued", serve_args->max_queued, "requests that may wait; more are answered 'busy'")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  return {{run, [run_args, &out] { return run_command(*run_args, out); }},
          {serve, [serve_args, &log] { return serve_until_signal(*serve_args, log); }}};
}

}  // namespace rlwb::sandbox
