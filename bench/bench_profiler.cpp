// The profiler's cost, side by side: the default experiment's RL steps
// (GRPO on arithmetic, no warm start or evaluation) with profiling off,
// with RLWB's profiler at its defaults, and with torch's own profiler
// (Kineto through LibTorch's C++ API, recording the same operators with
// their shapes: profile.engine=kineto), as interleaved rounds of the three
// (the order rotates each round), every process pinned to the same cores.
// Per round: each mode's median step time, the overhead of each profiler
// against the run without, and the size of RLWB's profile next to the size
// of Kineto's trace for the same steps. Goals: RLWB under 3% in every
// round; its profile at least 100x smaller than the trace.
//
//   bench_profiler [--rounds N] [--steps N] [--batch PROMPTS] [--cores 0,1]
#include "core/common/command_line.h"
#include "core/controller/controller.h"
#include "core/tracking/tracking.h"
#include "app/registries.h"

#include <sched.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

using namespace rlwb::core;

namespace {

constexpr int kWarmupSteps = 3;  // not timed: first calls allocate and fuse weights

struct ModeRun {
  double median_step_s = 0;
  int64_t profile_bytes = 0;  // RLWB's rows, or the Kineto traces' files
  int64_t profiled_steps = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

ModeRun run_mode(const std::string& mode, int steps, int batch, const std::string& db) {
  std::vector<std::string> overrides = {"trainer.steps=" + std::to_string(steps + kWarmupSteps),
                                        "~trainer.warm_start",
                                        "~trainer.eval",
                                        "~trainer.save",
                                        "~trainer.samples",
                                        "task.batch_size=" + std::to_string(batch),
                                        "models.actor.config.ppo.mini_batch_size=0"};
  const std::string timed = std::to_string(kWarmupSteps + 1) + "-";
  if (mode == "rlwb") overrides.insert(overrides.end(), {"profile.enabled=true", "profile.steps=" + timed});
  if (mode == "kineto")
    overrides.insert(overrides.end(),
                     {"profile.enabled=true", "profile.steps=" + timed, "profile.engine=kineto"});
  Experiment exp =
      load_experiment_file(std::string(RLWB_SOURCE_DIR) + "/experiments/default.yaml", overrides);
  ControllerOptions options = rlwb::app::controller_options();
  options.worker_binary = RLWB_WORKER_BIN;
  options.log_dir = (std::filesystem::temp_directory_path() / ("rlwb-bench-profiler-" + mode)).string();
  std::vector<double> step_s;
  options.hooks.step_done = [&](const StepReport& r, const auto&) {
    if (r.step > kWarmupSteps) step_s.push_back(r.seconds);
  };
  TrackingWriter tracking(db);
  Controller controller(exp, options, &tracking);
  RunResult result = controller.run();
  tracking.flush();
  if (result.status != "finished")
    throw std::runtime_error("bench_profiler: the " + mode + " run " + result.status + ": " + result.error);
  ModeRun out;
  out.median_step_s = median(step_s);
  out.profiled_steps = static_cast<int64_t>(step_s.size());
  TrackingReader reader(db);
  for (auto& row : reader.profiles(result.run_id)) {
    if (row.kind == "kineto")
      out.profile_bytes += nlohmann::json::parse(row.data).value("bytes", int64_t{0});
    else if (mode == "rlwb")
      out.profile_bytes += static_cast<int64_t>(row.data.size() + row.node.size() + row.kind.size() + 16);
  }
  std::filesystem::remove_all(options.log_dir);
  return out;
}

void pin_to(const std::string& cores) {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::stringstream in(cores);
  for (std::string core; std::getline(in, core, ',');) CPU_SET(std::stoi(core), &set);
  // Inherited by the worker processes the controller starts.
  if (sched_setaffinity(0, sizeof set, &set) != 0) std::perror("bench_profiler: sched_setaffinity");
}

}  // namespace

int main(int argc, char** argv) {
  int rounds = 5, steps = 10, batch = 64;
  std::string cores = "0,1";
  CLI::App app{
      "bench_profiler: step time with profiling off, RLWB's profiler and torch's (Kineto); "
      "profile size next to Kineto's trace",
      "bench_profiler"};
  app.option_defaults()->always_capture_default();
  app.add_option("--rounds", rounds, "interleaved rounds of the three modes")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps per run (after 3 untimed)")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "prompts per step")->check(CLI::PositiveNumber);
  app.add_option("--cores", cores, "the cores every process is pinned to");
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  pin_to(cores);
  const auto dir = std::filesystem::temp_directory_path() / "rlwb-bench-profiler";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "bench.db").string();
  const std::vector<std::string> modes = {"off", "rlwb", "kineto"};
  std::printf("default experiment, %d prompts per step, %d timed steps per run, cores %s\n", batch, steps,
              cores.c_str());
  std::printf("%-6s %10s %10s %10s %10s %10s %12s %12s %10s\n", "round", "off ms", "rlwb ms", "kineto ms",
              "rlwb +%", "kineto +%", "rlwb bytes", "kineto bytes", "smaller");
  std::vector<double> rlwb_over, kineto_over, size_ratio;
  for (int round = 0; round < rounds; ++round) {
    ModeRun r[3];
    for (int k = 0; k < 3; ++k) {
      const int m = (round + k) % 3;  // rotate who goes first
      r[m] = run_mode(modes[m], steps, batch, db);
    }
    const double ro = 100 * (r[1].median_step_s / r[0].median_step_s - 1);
    const double ko = 100 * (r[2].median_step_s / r[0].median_step_s - 1);
    const double ratio = r[1].profile_bytes > 0 ? double(r[2].profile_bytes) / r[1].profile_bytes : 0;
    rlwb_over.push_back(ro), kineto_over.push_back(ko), size_ratio.push_back(ratio);
    std::printf("%-6d %10.1f %10.1f %10.1f %9.1f%% %9.1f%% %12lld %12lld %9.0fx\n", round + 1,
                1000 * r[0].median_step_s, 1000 * r[1].median_step_s, 1000 * r[2].median_step_s, ro, ko,
                static_cast<long long>(r[1].profile_bytes), static_cast<long long>(r[2].profile_bytes),
                ratio);
    std::fflush(stdout);
  }
  auto [rmin, rmax] = std::minmax_element(rlwb_over.begin(), rlwb_over.end());
  auto [kmin, kmax] = std::minmax_element(kineto_over.begin(), kineto_over.end());
  const double smallest_ratio = *std::min_element(size_ratio.begin(), size_ratio.end());
  std::printf(
      "RLWB profiler overhead: median %.1f%%, min %.1f%%, max %.1f%% (goal < 3%% in every round: %s)\n",
      median(rlwb_over), *rmin, *rmax, *rmax < 3 ? "met" : "NOT met");
  std::printf("Kineto overhead:        median %.1f%%, min %.1f%%, max %.1f%%\n", median(kineto_over), *kmin,
              *kmax);
  std::printf(
      "RLWB profile smaller than Kineto's trace: median %.0fx, min %.0fx (goal >= 100x in every round: %s)\n",
      median(size_ratio), smallest_ratio, smallest_ratio >= 100 ? "met" : "NOT met");
  return 0;
}
