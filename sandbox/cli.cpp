#include "sandbox/cli.h"

#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "sandbox/client.h"
#include "sandbox/sandbox.h"
#include "sandbox/service.h"

namespace rlwb::sandbox {
namespace {

class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

std::string read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(std::string("cannot read ") + what + " '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

int int_flag(const CliArgs& a, const std::string& name, int fallback) {
  auto it = a.flags.find(name);
  if (it == a.flags.end()) return fallback;
  try {
    size_t used = 0;
    int v = std::stoi(it->second, &used);
    if (used == it->second.size()) return v;
  } catch (const std::exception&) {
  }
  throw UsageError("--" + name + " needs an integer, got '" + it->second + "'");
}

bool bool_flag(const CliArgs& a, const std::string& name) {
  auto it = a.flags.find(name);
  return it != a.flags.end() && it->second != "false" && it->second != "0";
}

int run_command(const CliArgs& a, std::ostream& out) {
  for (const auto& [name, value] : a.flags)
    if (name != "lang" && name != "stdin" && name != "json" && name != "endpoint" &&
        name != "wall-ms" && name != "cpu-ms" && name != "memory-mb" && name != "timeout-ms")
      throw UsageError("run: unknown option --" + name);
  if (a.positional.size() != 1) throw UsageError("run needs exactly one program file");
  auto lang_it = a.flags.find("lang");
  if (lang_it == a.flags.end()) throw UsageError("run needs --lang python3|bash|c|cpp");
  RunRequest req;
  try {
    req.language = parse_language(lang_it->second);
  } catch (const SandboxError& e) {
    throw UsageError(e.what());
  }
  req.program = read_file(a.positional[0], "program file");
  if (a.flags.count("stdin")) req.stdin_data = read_file(a.flags.at("stdin"), "stdin file");
  req.limits.wall_ms = int_flag(a, "wall-ms", req.limits.wall_ms);
  req.limits.cpu_ms = int_flag(a, "cpu-ms", req.limits.cpu_ms);
  req.limits.memory_mb = int_flag(a, "memory-mb", req.limits.memory_mb);
  try {
    validate_limits(req.limits, "limits");
  } catch (const SandboxError& e) {
    throw UsageError(e.what());
  }
  Verdict v;
  if (a.flags.count("endpoint")) {
    // Bound the wait: the run's own limits plus room for queueing.
    int fallback =
        req.limits.wall_ms + (is_compiled(req.language) ? req.compile_limits.wall_ms : 0) + 60000;
    ClientOptions co;
    co.timeout = std::chrono::milliseconds(int_flag(a, "timeout-ms", fallback));
    v = SandboxClient(a.flags.at("endpoint"), co).run(req);
  } else {
    PoolOptions pool;
    pool.executors = 1;
    v = LocalSandbox(pool).run(req);
  }
  if (bool_flag(a, "json"))
    out << verdict_to_json(v).dump() << "\n";
  else
    out << describe(v);
  return v.outcome == Outcome::sandbox_error ? 1 : 0;
}

int serve_command(const CliArgs& a, std::ostream& out) {
  if (!a.positional.empty()) throw UsageError("serve takes no positional arguments");
  ServiceOptions o;
  if (a.flags.count("endpoint")) o.endpoint = a.flags.at("endpoint");
  o.pool.executors = int_flag(a, "executors", 0);
  if (o.pool.executors < 0) throw UsageError("--executors must be positive");
  int queued = int_flag(a, "max-queued", static_cast<int>(o.max_queued));
  if (queued < 1) throw UsageError("--max-queued must be positive");
  o.max_queued = static_cast<size_t>(queued);
  for (const auto& [name, value] : a.flags)
    if (name != "endpoint" && name != "executors" && name != "max-queued")
      throw UsageError("serve: unknown option --" + name);
  return serve_until_signal(o, out);
}

}  // namespace

const char* cli_usage() {
  return R"(usage:
  rlwb-sandbox run --lang python3|bash|c|cpp FILE [--stdin FILE] [--json] [--endpoint E]
                   [--wall-ms N] [--cpu-ms N] [--memory-mb N] [--timeout-ms N]
      run FILE once in a fresh sandbox and print the verdict (exit status 0 whatever the
      verdict, 1 if the sandbox itself failed); in-process unless --endpoint names a service
      (--timeout-ms bounds the wait for its answer)
  rlwb-sandbox serve [--endpoint ipc:///tmp/rlwb-sandbox.sock] [--executors N] [--max-queued N]
      serve run/judge requests over ZeroMQ until SIGINT/SIGTERM
)";
}

CliArgs parse_cli_args(const std::vector<std::string>& args) {
  CliArgs a;
  if (args.empty()) return a;
  a.command = args[0];
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& s = args[i];
    if (s.rfind("--", 0) == 0 && s.size() > 2) {
      std::string name = s.substr(2);
      auto eq = name.find('=');
      if (eq != std::string::npos)
        a.flags[name.substr(0, eq)] = name.substr(eq + 1);
      else if (i + 1 < args.size() && args[i + 1].rfind("--", 0) != 0 && name != "json")
        a.flags[name] = args[++i];
      else
        a.flags[name] = "true";
    } else {
      a.positional.push_back(s);
    }
  }
  return a;
}

int cli_main(const CliArgs& a, std::ostream& out, std::ostream& err) {
  try {
    if (a.command == "run") return run_command(a, out);
    if (a.command == "serve") return serve_command(a, err);
    throw UsageError(a.command.empty() ? "no command given"
                                       : "unknown command '" + a.command + "'");
  } catch (const UsageError& e) {
    err << "rlwb-sandbox: " << e.what() << "\n" << cli_usage();
    return 2;
  } catch (const std::exception& e) {
    err << "rlwb-sandbox: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace rlwb::sandbox
