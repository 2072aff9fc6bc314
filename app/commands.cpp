#include "app/commands.h"

#include "core/controller/controller.h"
#include "core/launch/local_launcher.h"
#include "rewards/modules/reward_types.h"
#include "workers/catalog.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>

namespace rlwb::app {
namespace {

const char* kDefaultDb = "runs/rlwb.db";

// rlwb-worker sits next to rlwb in an install, or in ../workers in the build tree.
std::string find_worker_binary(const char* argv0) {
  if (const char* env = std::getenv("RLWB_WORKER")) return env;
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) self = std::filesystem::absolute(argv0);
  auto dir = self.parent_path();
  for (auto candidate : {dir / "rlwb-worker", dir / ".." / "workers" / "rlwb-worker"})
    if (std::filesystem::exists(candidate)) return std::filesystem::canonical(candidate).string();
  throw std::runtime_error("cannot find rlwb-worker next to " + self.string() +
                           " or in ../workers; set RLWB_WORKER=/path/to/rlwb-worker");
}

core::Experiment load_and_validate(const CommandLine& cl) {
  if (cl.positional.empty()) throw UsageError(cl.command + " needs a graph file, e.g. experiments/demo.yaml");
  core::Experiment exp = core::load_experiment_file(cl.positional[0], cl.overrides);
  auto issues = core::validate_experiment(exp, workers::build_catalog(workers::builtin_roles(), &rewards::builtin_reward_types()));
  if (!issues.empty()) throw core::GraphError(issues);
  return exp;
}

void print_graph_error(const core::GraphError& e) {
  std::cerr << "rlwb: the graph file has " << e.issues().size() << " problem(s):\n";
  for (auto& issue : e.issues()) std::cerr << "  " << issue.to_string() << "\n";
}

}  // namespace

CommandLine parse_command_line(const std::vector<std::string>& args) {
  CommandLine cl;
  cl.command = args.at(0);
  for (size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) == 0) {
      std::string name = a.substr(2);
      auto eq = name.find('=');
      if (eq != std::string::npos) {
        cl.flags[name.substr(0, eq)] = name.substr(eq + 1);
      } else if (name == "json" && (i + 1 >= args.size() || args[i + 1].rfind("--", 0) == 0)) {
        cl.flags[name] = "true";  // a switch: rlwb sandbox run ... --json
      } else {
        if (i + 1 >= args.size()) throw UsageError("option " + a + " needs a value");
        cl.flags[name] = args[++i];
      }
    } else if (a.find('=') != std::string::npos) {
      cl.overrides.push_back(a);
    } else {
      cl.positional.push_back(a);
    }
  }
  return cl;
}

int cmd_validate(const CommandLine& cl) {
  try {
    core::Experiment exp = load_and_validate(cl);
    std::cout << cl.positional[0] << ": ok (" << exp.nodes.size() << " nodes, " << exp.models.size()
              << " models, " << exp.pools.size() << " pools)\n";
    return 0;
  } catch (const core::GraphError& e) {
    print_graph_error(e);
    return 1;
  }
}

// Before/after of the held-out evaluation and where the models were saved.
static void print_run_summary(const core::RunResult& result) {
  if (result.evals.size() >= 2) {
    const auto& first = result.evals.front();
    const auto& last = result.evals.back();
    char line[256];
    std::snprintf(line, sizeof line,
                  "[rlwb] held-out score (val/score/mean, %lld rows): %.3f before RL -> %.3f after step %lld "
                  "(%+.1f points)\n",
                  static_cast<long long>(last.rows), first.score, last.score, static_cast<long long>(last.step),
                  100.0 * (last.score - first.score));
    std::cerr << line;
  }
  for (auto& [model, dir] : result.checkpoints)
    std::cerr << "[rlwb] " << model << " saved (Hugging Face layout): " << dir << "\n";
}

int cmd_run(const CommandLine& cl, const char* argv0) {
  core::Experiment exp;
  try {
    exp = load_and_validate(cl);
  } catch (const core::GraphError& e) {
    print_graph_error(e);
    return 1;
  }
  core::ControllerOptions options;
  options.reward_types = &rewards::builtin_reward_types();
  options.worker_binary = find_worker_binary(argv0);
  options.run_name = cl.flag("name", "");
  options.transport = cl.flag("transport", "ipc");
  std::string db = cl.flag("db", kDefaultDb);
  // Runs left 'running' by a controller that died (power loss, SIGKILL)
  // are closed as failed before a new one starts.
  for (int64_t stale : core::TrackingAdmin(db).mark_stale_runs())
    std::cerr << "[rlwb] run " << stale << " was left running by a dead process; marked failed\n";
  core::TrackingWriter tracking(db);
  core::install_interrupt_handler();
  core::Controller controller(exp, options, &tracking);
  core::RunResult result = controller.run();
  tracking.flush();
  std::cerr << "[rlwb] run " << result.run_id << " " << result.status << " (" << result.steps.size()
            << " steps); tracking DB: " << db << "\n";
  if (!result.error.empty()) std::cerr << "rlwb: " << result.error << "\n";
  print_run_summary(result);
  if (result.status == "finished") return 0;
  return result.status == "interrupted" ? 130 : 1;
}

int cmd_runs(const CommandLine& cl) {
  if (cl.positional.empty())
    throw UsageError("runs needs 'list', 'show ID', 'compare ID ID...' or 'export ID'");
  std::string db = cl.flag("db", kDefaultDb);
  if (!std::filesystem::exists(db))
    throw std::runtime_error("no tracking database at " + db + " (run an experiment first, or pass --db PATH)");
  core::TrackingReader reader(db);
  if (cl.positional[0] == "list") {
    std::cout << core::format_runs_table(reader.list_runs());
    return 0;
  }
  if (cl.positional[0] == "show") {
    if (cl.positional.size() < 2) throw UsageError("runs show needs a run id (see 'rlwb runs list')");
    int64_t id = 0;
    try {
      id = std::stoll(cl.positional[1]);
    } catch (...) {
      throw UsageError("run id must be a number, got '" + cl.positional[1] + "'");
    }
    if (!reader.run(id)) throw std::runtime_error("no run " + std::to_string(id) + " in " + db);
    std::cout << core::format_run_details(reader, id);
    return 0;
  }
  if (cl.positional[0] == "compare") return cmd_runs_compare(cl, reader);
  if (cl.positional[0] == "export") return cmd_runs_export(cl, reader);
  throw UsageError("unknown runs subcommand '" + cl.positional[0] +
                   "' (use list, show, compare or export)");
}

}  // namespace rlwb::app
