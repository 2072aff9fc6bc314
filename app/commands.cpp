// rlwb run and rlwb validate: load a graph file with its key.path=value
// overrides, check it against the catalog of methods, then run it (workers,
// controller, tracking DB) or report what was found.
#include "app/commands.h"
#include "core/validate/validator.h"

#include "core/config/experiment_options.h"
#include "core/config/launch_options.h"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <stop_token>
#include <thread>

#include "app/interrupt_stop.h"
#include "app/progress.h"
#include "app/remote_run.h"
#include "core/controller/controller.h"
#include "core/launch/local_launcher.h"
#include "core/launch/slurm.h"
#include "app/catalog.h"
#include "app/registries.h"

namespace rlwb::app {

// rlwb-worker sits next to rlwb in an install, or in ../workers in the build tree.
std::string find_worker_binary(const std::string& argv0) {
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

namespace {

constexpr const char* kOverridesHelp =
    "key.path=value overrides after FILE, Hydra style: key=value replaces, +key=value adds, "
    "++key=value replaces or adds, ~key removes";

// The graph file and its overrides, as run and validate take them.
struct ExperimentArgs {
  std::string file;
  std::vector<std::string> overrides;
};

void add_experiment_args(CLI::App& command, ExperimentArgs& args, bool file_required = true) {
  auto* file = command.add_option("FILE", args.file, "the experiment graph file, e.g. experiments/demo.yaml");
  if (file_required) file->required();
  command.add_option("overrides", args.overrides, kOverridesHelp);
}

core::Experiment load_and_validate(const ExperimentArgs& args) {
  core::Experiment exp = core::load_experiment_file(args.file, args.overrides);
  auto issues = core::validate_experiment(exp, catalog());
  if (!issues.empty()) throw core::GraphError(issues);
  return exp;
}

void print_graph_error(const core::GraphError& e) {
  std::cerr << "rlwb: the graph file has " << e.issues().size() << " problem(s):\n";
  for (auto& issue : e.issues()) std::cerr << "  " << issue.to_string() << "\n";
}

struct ValidateArgs {
  ExperimentArgs experiment;
  bool resolved = false;
};

int validate(const ValidateArgs& args) {
  try {
    core::Experiment exp = load_and_validate(args.experiment);
    if (args.resolved) {
      std::cout << core::experiment_to_yaml(exp);
      return 0;
    }
    std::cout << args.experiment.file << ": ok (" << exp.nodes.size() << " nodes, " << exp.models.size()
              << " models, " << exp.pools.size() << " pools)\n";
    return 0;
  } catch (const core::GraphError& e) {
    print_graph_error(e);
    return 1;
  }
}

// Before/after of the held-out evaluation and where the models were saved.
void print_run_summary(const core::RunResult& result) {
  if (result.evals.size() >= 2) {
    const auto& first = result.evals.front();
    const auto& last = result.evals.back();
    char line[256];
    std::snprintf(line, sizeof line,
                  "[rlwb] held-out score (val/score/mean, %lld rows): %.3f before RL -> %.3f after step %lld "
                  "(%+.1f points)\n",
                  static_cast<long long>(last.rows), first.score, last.score,
                  static_cast<long long>(last.step), 100.0 * (last.score - first.score));
    std::cerr << line;
  }
  for (auto& [model, dir] : result.checkpoints)
    std::cerr << "[rlwb] " << model << " saved (Hugging Face layout): " << dir << "\n";
}

struct RunArgs {
  ExperimentArgs experiment;
  std::string db = kDefaultTrackingDb;
  std::string name;
  std::string transport = "ipc";
  std::string launch_file;  // where the workers run (docs/launching.md)
  int64_t from_run = 0;
  int64_t resume = 0;  // --resume RUN
  std::string argv0;
  // --remote HOST: the run goes there over SSH and is mirrored here.
  core::RemoteHost remote;
  int64_t follow_remote = 0;  // --follow RUN: mirror a run already there
  double reconnect_for_s = 300;
};

// --resume RUN, checked before anything starts (core/controller/resume.h):
// the run, the experiment (the graph text stored with the run, or FILE when
// given) and the checkpoint it continues from. Throws ResumeError or
// GraphError; the DB is only read (and runs of dead controllers closed).
core::ResumePlan prepare_resume(const RunArgs& args, core::Experiment& exp) {
  if (!std::filesystem::exists(args.db))
    throw core::ResumeError("--resume " + std::to_string(args.resume) + ": no tracking database at " +
                            args.db + "; pass the one the run was recorded in with --db PATH");
  for (int64_t stale : core::TrackingAdmin(args.db).mark_stale_runs())
    std::cerr << "[rlwb] run " << stale << " was left running by a dead process; marked failed\n";
  core::TrackingReader reader(args.db);
  core::RunInfo run = core::resumable_run(reader, args.resume, args.db);
  if (args.experiment.file.empty()) {
    exp = core::load_experiment_text(run.experiment_text, run.experiment_file);
    auto issues = core::validate_experiment(exp, catalog());
    if (!issues.empty()) throw core::GraphError(issues);
  } else {
    exp = load_and_validate(args.experiment);
  }
  core::ResumePlan plan = core::plan_resume(reader, run, exp);
  for (const auto& why : plan.checkpoint.skipped)
    std::cerr << "[rlwb] skipped a damaged checkpoint: " << why << "\n";
  std::cerr << "[rlwb] resuming run " << run.id << " from step " << plan.checkpoint.manifest.step << " ("
            << plan.checkpoint.dir << ")\n";
  return plan;
}

// --from-run must name a run of this DB: checked before anything starts.
// A file an older build wrote is brought to this schema first, as the run
// would (readers refuse older files).
bool check_from_run(const RunArgs& args) {
  if (args.from_run == 0) return true;
  if (std::filesystem::exists(args.db)) {
    core::TrackingAdmin migrate_on_open(args.db);
    if (core::TrackingReader(args.db).run(args.from_run)) return true;
  }
  std::cerr << "rlwb: --from-run " << args.from_run << ": no such run in " << args.db
            << " (see 'rlwb runs list --db " << args.db << "')\n";
  return false;
}

// --launch is read and checked against the experiment's pools before the
// tracking run starts, so a bad file costs nothing.
bool read_launch(const std::string& path, const core::Experiment& exp, core::config::LaunchOptions& out) {
  std::map<std::string, int> pools;
  for (const auto& [name, pool] : exp.pools) pools[name] = pool.workers;
  try {
    out = core::config::read_launch_file(path, pools);
    if (out.target != core::config::LaunchTarget::kSlurm) return true;
    std::vector<std::string> problems = core::check_slurm(out.slurm, pools);
    if (problems.empty()) return true;
    std::cerr << "rlwb: the launch file " << path << " asks for Slurm, but:\n";
    for (const auto& problem : problems) std::cerr << "  " << problem << "\n";
  } catch (const core::config::ConfigError& e) {
    std::cerr << "rlwb: the launch file " << path << " has " << e.problems().size() << " problem(s):\n";
    for (const auto& problem : e.problems()) std::cerr << "  " << problem.to_string() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "rlwb: --launch: " << e.what() << "\n";
  }
  return false;
}

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// --remote: checked here as far as this host can (the graph file against
// this build's catalog, which the remote's equals: the versions must match),
// then started there as the experiment resolved, so its defaults files and
// the overrides need not exist there.
int run_on_remote(const RunArgs& args) {
  RemoteRunRequest request;
  request.remote = args.remote;
  request.local_db = args.db;
  request.follow_run = args.follow_remote;
  request.reconnect_for_s = args.reconnect_for_s;
  const std::string stamp = std::to_string(std::time(nullptr)) + "-" + std::to_string(getpid());
  if (args.follow_remote == 0 && args.resume == 0) {
    if (args.experiment.file.empty()) {
      std::cerr << "rlwb run --remote: FILE is required (or --resume RUN, or --follow RUN)\n";
      return 2;
    }
    try {
      const core::Experiment exp = load_and_validate(args.experiment);
      request.experiment_yaml = core::experiment_to_yaml(exp);
    } catch (const core::GraphError& e) {
      print_graph_error(e);
      return 1;
    }
    request.experiment_name =
        std::filesystem::path(args.experiment.file).stem().string() + "-" + stamp + ".yaml";
  }
  if (args.resume) request.run_args = {"--resume", std::to_string(args.resume)};
  if (!args.launch_file.empty()) {
    request.launch_name = "launch-" + stamp + ".yaml";
    request.launch_text = read_text_file(args.launch_file);
  }
  if (!args.name.empty()) request.run_args.insert(request.run_args.end(), {"--name", args.name});
  if (args.transport != "ipc")
    request.run_args.insert(request.run_args.end(), {"--transport", args.transport});
  return run_remote(request);
}

int run(const RunArgs& args) {
  if (!args.remote.host.empty()) return run_on_remote(args);
  if (args.follow_remote) {
    std::cerr << "rlwb run: --follow RUN mirrors a run of a remote host: add --remote HOST\n";
    return 2;
  }
  core::Experiment exp;
  std::optional<core::ResumePlan> resume;
  if (args.resume == 0 && args.experiment.file.empty()) {
    std::cerr << "rlwb run: FILE is required (or --resume RUN)\n";
    return 2;
  }
  try {
    if (args.resume)
      resume = prepare_resume(args, exp);
    else
      exp = load_and_validate(args.experiment);
  } catch (const core::GraphError& e) {
    print_graph_error(e);
    return 1;
  } catch (const core::ResumeError& e) {
    std::cerr << "rlwb: " << e.what() << "\n";
    return 2;
  }
  if (!check_from_run(args)) return 2;
  core::ControllerOptions options = app::controller_options();
  if (!args.launch_file.empty() && !read_launch(args.launch_file, exp, options.launch)) return 2;
  options.worker_binary = find_worker_binary(args.argv0);
  options.run_name = args.name;
  options.from_run = args.from_run;
  options.transport = args.transport;
  options.resume = std::move(resume);
  // Runs left 'running' by a controller that died (power loss, SIGKILL)
  // are closed as failed before a new one starts.
  for (int64_t stale : core::TrackingAdmin(args.db).mark_stale_runs())
    std::cerr << "[rlwb] run " << stale << " was left running by a dead process; marked failed\n";
  core::TrackingWriter tracking(args.db);
  // The first Ctrl-C becomes a stop request: the run ends at the next node
  // boundary as 'interrupted'. (A second one kills the workers at once.)
  InterruptStop interrupt;
  options.stop = interrupt.stop_token();
  options.hooks = progress_printer(core::config::trainer_steps(exp));
  core::Controller controller(exp, options, &tracking);
  core::RunResult result = controller.run();
  tracking.flush();
  std::cerr << "[rlwb] run " << result.run_id << " " << result.status << " (" << result.steps.size()
            << " steps); tracking DB: " << args.db << "\n";
  if (!result.error.empty()) std::cerr << "rlwb: " << result.error << "\n";
  print_run_summary(result);
  if (result.status == "finished") return 0;
  return result.status == "interrupted" ? 130 : 1;
}

}  // namespace

void add_db_option(CLI::App& command, std::string& db) {
  command.add_option("--db", db, "the tracking database")->capture_default_str();
}

core::TrackingReader open_tracking_reader(const std::string& db) {
  if (!std::filesystem::exists(db))
    throw std::runtime_error("no tracking database at " + db +
                             " (run an experiment first, or pass --db PATH)");
  return core::TrackingReader(db);
}

static void add_remote_options(CLI::App& command, RunArgs& args) {
  const char* group = "Remote run (docs/launching.md)";
  command
      .add_option(
          "--remote", args.remote.host,
          "run on this SSH host (a Host of your ssh config, or user@host) and mirror the run into --db "
          "here; --launch then names that host's workers")
      ->group(group);
  command
      .add_option("--remote-dir", args.remote.dir,
                  "the working folder there (its runs/rlwb.db holds the run)")
      ->capture_default_str()
      ->group(group);
  command.add_option("--remote-rlwb", args.remote.rlwb, "the rlwb command there")
      ->capture_default_str()
      ->group(group);
  command.add_option("--ssh-config", args.remote.ssh_config, "ssh -F: the ssh config file to use")
      ->group(group);
  command
      .add_option("--follow", args.follow_remote,
                  "mirror run RUN of the remote host (already started, or left when the link was lost)")
      ->check(CLI::PositiveNumber)
      ->group(group);
  command
      .add_option("--reconnect-for", args.reconnect_for_s,
                  "seconds to keep trying when the link to the remote host drops")
      ->check(CLI::Range(1.0, 86400.0))
      ->capture_default_str()
      ->group(group);
}

core::Subcommand add_run_command(CLI::App& rlwb, std::string argv0) {
  auto args = std::make_shared<RunArgs>();
  args->argv0 = std::move(argv0);
  CLI::App* command = rlwb.add_subcommand("run", "run an experiment graph file");
  command->footer(
      "Ctrl-C stops the run cleanly: it is kept as 'interrupted', with every metric, and no "
      "worker is left (exit code 130).");
  add_experiment_args(*command, args->experiment, /*file_required=*/false);
  add_db_option(*command, args->db);
  command
      ->add_option("--resume", args->resume,
                   "continue this run (failed, interrupted or killed) from its last good checkpoint "
                   "(trainer.checkpoint), with the graph text stored with it, or FILE when given")
      ->check(CLI::PositiveNumber);
  command->add_option("--name", args->name, "name of the run in the tracking database");
  command
      ->add_option("--from-run", args->from_run,
                   "the run this one relaunches (recorded with it; the GUI's Open in editor sets it)")
      ->check(CLI::PositiveNumber);
  command->add_option("--transport", args->transport, "controller <-> worker transport")
      ->check(CLI::IsMember({"ipc", "tcp"}))
      ->capture_default_str();
  command
      ->add_option("--launch", args->launch_file,
                   "launch file: the hosts the pools' workers run on (docs/launching.md)")
      ->type_name("LAUNCH.yaml");
  add_remote_options(*command, *args);
  return {command, [args] { return run(*args); }};
}

core::Subcommand add_settings_command(CLI::App& rlwb) {
  CLI::App* command = rlwb.add_subcommand(
      "settings", "print every setting of a graph file with its type, default and meaning (markdown)");
  return {command, [] {
            std::cout << core::config::settings_reference();
            return 0;
          }};
}

core::Subcommand add_validate_command(CLI::App& rlwb) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* command =
      rlwb.add_subcommand("validate", "check a graph file and list every problem, without starting anything");
  add_experiment_args(*command, args->experiment);
  command->add_flag("--resolved", args->resolved,
                    "print the experiment as it will run (YAML, overrides applied) instead of "
                    "'ok'; problems still go to stderr with exit code 1");
  return {command, [args] { return validate(*args); }};
}

}  // namespace rlwb::app
