// rlwb plan: placements and parallel layouts for an experiment, chosen by
// simulating its step on a device profile (core/planner), and
// `rlwb plan --calibrate`: this machine measured into a profile
// (workers/calibration).
//   rlwb plan FILE [key.path=value ...] --devices N [--nodes K]
//       [--device-profile NAME|FILE] [--top 10] [--write OUT.yaml [--pick K]]
//       [--max-pp P] [--generation-layouts] [--prompt-length T] [--json]
//   rlwb plan --calibrate [FILE] [--device-profile NAME|FILE] [--calibrate-ranks R]
// Only plans whose graph file the validator accepts are printed (a layout
// the cost model likes can still break a rule of another phase, say an
// evaluation batch that dp does not divide).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>

#include "app/call_cost.h"
#include "app/catalog.h"
#include "app/commands.h"
#include "app/tokenizer_vocab.h"
#include "core/config/experiment_options.h"
#include "core/planner/device_profile.h"
#include "core/planner/plan_error.h"
#include "core/planner/plan_report.h"
#include "core/planner/plan_writer.h"
#include "core/planner/planner.h"
#include "core/planner/valid_plans.h"
#include "workers/calibration/device_calibration.h"

namespace rlwb::app {
namespace {

namespace planner = core::planner;

struct PlanArgs {
  std::string file;
  std::vector<std::string> overrides;
  int devices = 0;
  int nodes = 0;
  std::string profile;
  int top = 10;
  std::string write;
  int pick = 1;
  int max_pp = 1;
  bool generation_layouts = false;  // forced on; on by default for a CPU profile
  int64_t prompt_length = 0;
  bool json = false;
  bool calibrate = false;
  int calibrate_ranks = 4;
};

planner::DeviceProfile chosen_profile(const std::string& name) {
  if (!name.empty()) return planner::load_device_profile(name);
  const std::string stored = planner::this_host_profile_path();
  if (std::filesystem::exists(stored)) return planner::load_device_profile(stored);
  std::string known;
  for (const auto& n : planner::builtin_device_profile_names()) known += (known.empty() ? "" : ", ") + n;
  throw planner::PlanError("no --device-profile given and this machine has no calibrated profile (" + stored +
                           "); name one of " + known + ", or run 'rlwb plan --calibrate' first");
}

// Where --calibrate stores its profile: a path as given, a name under the
// profile folder.
std::string calibration_target(const std::string& given) {
  if (given.empty()) return planner::this_host_profile_path();
  if (given.find('/') != std::string::npos || given.ends_with(".json")) return given;
  return planner::device_profile_dir() + "/" + given + ".json";
}

int calibrate(const PlanArgs& args) {
  workers::calibration::CalibrationOptions options;
  const std::string target = calibration_target(args.profile);
  options.name = std::filesystem::path(target).stem().string();
  options.max_ranks = args.calibrate_ranks;
  // The shapes of the experiment's actor when a file is given, else the
  // default experiment's.
  options.shape = {128, 256, 2, 4, 2, 18, false, false};
  std::optional<core::Experiment> exp;
  if (!args.file.empty()) {
    exp = core::load_experiment_file(args.file, args.overrides);
    const planner::PlanInput input = planner::plan_input_of(*exp, tokenizer_vocab);
    for (const auto& m : input.models)
      if (m.generates) options.shape = m.shape;
    options.sequence = input.workload.sequence_length();
    options.tokens =
        std::max<int64_t>(options.sequence, std::min<int64_t>(input.workload.rows(), 256) * options.sequence);
  }
  std::cout << "calibrating this machine (matmul, attention, memory, operators, c10d Gloo collectives over 2-"
            << args.calibrate_ranks << " processes)...\n";
  planner::DeviceProfile profile = workers::calibration::calibrate_this_machine(options);
  if (exp) {
    // What a call costs whatever its rows, from the experiment run on one
    // worker at two batch sizes (app/call_cost.h).
    std::cout << "running the experiment on one worker at two batch sizes (a call's fixed cost)...\n";
    const CallCost calls = measure_call_cost(*exp, profile, find_worker_binary(""));
    profile.call_overhead_s = calls.mean_fixed_s;
    profile.stage_call_overhead_s = calls.by_stage;
    profile.measured["call_fixed_seconds"] = calls.measured;
    profile.compute_scale = {exp->name, calls.compute_scale};
    profile.sources["compute_scale"] =
        "measured: each node's seconds per row from the same two runs over the cost model's compute for it "
        "on the one-device plan (app/call_cost.h)";
    profile.sources["call_overhead_s"] =
        "measured: the mean fixed cost (dispatch to collect) of the experiment's worker calls, from its "
        "run on one worker at two batch sizes (app/call_cost.h)";
    std::cout << "a call costs whatever its rows:";
    for (const auto& [kind, seconds] : calls.by_stage)
      std::cout << " " << kind << " " << seconds * 1e3 << " ms,";
    std::cout << " any other " << calls.mean_fixed_s * 1e3 << " ms\n";
    std::cout << "the rows cost, measured over modelled:";
    for (const auto& [node, scale] : calls.compute_scale) std::cout << " " << node << " x" << scale;
    std::cout << "\n";
  }
  planner::save_device_profile(profile, target);
  std::cout << "matmul " << profile.peak_matmul_flops / 1e9 << " GFLOP/s per process, attention "
            << profile.attention_flops() / 1e9 << " GFLOP/s, memory " << profile.memory_bandwidth / 1e9
            << " GB/s, " << profile.op_overhead_s * 1e6 << " us per operator\n";
  std::cout << profile.concurrent_devices
            << " process(es) compute at full speed at once (measured parallelism "
            << profile.measured.value("parallelism", 0.0) << " on " << profile.measured.value("cores", 0)
            << " cores; other jobs' load counts)\n";
  for (const auto& fit : profile.collectives.at("all_reduce"))
    std::cout << "all_reduce over " << fit.ranks << " processes: " << fit.latency_s * 1e6 << " us + bytes / "
              << fit.bandwidth / 1e9 << " GB/s\n";
  std::cout << "saved " << target << " (use it with --device-profile " << profile.name << ")\n";
  return 0;
}

int plan(const PlanArgs& args) {
  if (args.calibrate) return calibrate(args);
  if (args.file.empty()) throw core::UsageError("give the experiment FILE to plan (or --calibrate)");
  if (args.devices < 1) throw core::UsageError("give --devices N, the devices to plan for (at least 1)");
  const planner::DeviceProfile profile = chosen_profile(args.profile);
  const core::Experiment exp = core::load_experiment_file(args.file, args.overrides);
  const planner::PlanInput input = planner::plan_input_of(exp, tokenizer_vocab, args.prompt_length);
  planner::PlanOptions options;
  options.devices = args.devices;
  options.nodes = args.nodes;
  options.max_pp = args.max_pp;
  options.generation_layouts = args.generation_layouts || planner::plans_generation_layouts(profile);
  const int wanted = std::max(args.top, args.pick);
  planner::PlanSearch search = planner::search_valid_plans(exp, input, profile, options, catalog(), wanted);
  const std::vector<planner::Plan> accepted = search.plans;
  if (static_cast<int>(search.plans.size()) > args.top) search.plans.resize(args.top);
  if (args.json) {
    nlohmann::json out = {{"devices", args.devices},          {"profile", profile.name},
                          {"placements", search.placements},  {"allocations", search.allocations},
                          {"search_seconds", search.seconds}, {"plans", nlohmann::json::array()}};
    for (const auto& p : search.plans) out["plans"].push_back(planner::plan_json(input, p));
    std::cout << out.dump(2) << "\n";
  } else {
    std::cout << planner::plan_report(input, search, profile, args.devices);
  }
  if (!args.write.empty()) {
    if (args.pick > static_cast<int>(accepted.size()))
      throw core::UsageError("--pick " + std::to_string(args.pick) + ": only " +
                             std::to_string(accepted.size()) + " plans were found");
    const core::Experiment chosen =
        planner::apply_plan(exp, input, accepted[args.pick - 1], planner::pool_device_of(profile));
    std::ofstream out(args.write);
    if (!(out << core::experiment_to_yaml(chosen)))
      throw std::runtime_error("cannot write " + args.write + "; check the folder exists and is writable");
    (args.json ? std::cerr : std::cout) << "\nwrote plan #" << args.pick << " to " << args.write
                                        << " (check it with 'rlwb validate " << args.write << "')\n";
  }
  return 0;
}

}  // namespace

core::Subcommand add_plan_command(CLI::App& rlwb) {
  auto args = std::make_shared<PlanArgs>();
  CLI::App* command = rlwb.add_subcommand(
      "plan",
      "choose where each model runs and its parallel layout by simulating the step (docs/planner.md)");
  command->add_option("FILE", args->file, "the experiment graph file, e.g. experiments/ppo.yaml");
  command->add_option("overrides", args->overrides, "key.path=value overrides after FILE, as for rlwb run");
  command->add_option("--devices", args->devices, "devices to plan for (GPUs, or CPU worker processes)")
      ->check(CLI::PositiveNumber);
  command->add_option("--nodes", args->nodes, "nodes the devices are spread over (default: from the profile)")
      ->check(CLI::PositiveNumber);
  command->add_option("--device-profile", args->profile,
                      "a built-in profile (A100-80G, H100-80G, H200), a calibrated one's name, or a JSON "
                      "file (default: this machine's calibrated profile)");
  command->add_option("--top", args->top, "plans to print")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_option("--write", args->write,
                      "write the chosen plan's pools and layouts into this new graph file");
  command->add_option("--pick", args->pick, "which printed plan --write writes")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command
      ->add_option("--max-pp", args->max_pp,
                   "largest pipeline-parallel size to consider (1 by default: the workers run one "
                   "micro-batch in flight through the stages, which the pipelined cost does not model; "
                   "docs/planner.md)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  command->add_flag("--generation-layouts", args->generation_layouts,
                    "let the actor generate in its own layout (t_g, p_g), as the 3D-HybridEngine allows (the "
                    "default for a CPU profile; GPU pools cannot run it yet)");
  command
      ->add_option("--prompt-length", args->prompt_length,
                   "prompt tokens to plan for (default: from the task)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--json", args->json, "print the plans as JSON");
  command->add_flag("--calibrate", args->calibrate,
                    "measure this machine into a device profile (stored under " +
                        planner::device_profile_dir() + "/<name>.json; --device-profile names it)");
  command
      ->add_option("--calibrate-ranks", args->calibrate_ranks,
                   "largest group of processes the collectives are measured over")
      ->capture_default_str()
      ->check(CLI::Range(2, 64));
  return {command, [args] { return plan(*args); }};
}

}  // namespace rlwb::app
