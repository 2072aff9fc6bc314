// The profiler's cost, side by side: the default experiment's RL steps
// (GRPO on arithmetic, no warm start or evaluation) with profiling off,
// with RLWB's profiler at its defaults (one step in profile.every = 10
// profiled), and with torch's own profiler on the same steps (Kineto
// through LibTorch's C++ API, recording the same operators with their
// shapes: profile.engine=kineto), as interleaved rounds of the three (the
// order rotates each round), every process pinned to the same cores.
// Per round: each mode's mean step time (what a run pays), the overhead
// against the run without, the overhead of a profiled step alone and of
// the steps between (medians against the unprofiled run's median, so one
// slow step of noise does not decide), and the size of RLWB's profile
// next to the size of Kineto's traces for the same steps. Goals: RLWB
// under 3% in every round at the defaults; its profile at least 100x
// smaller than the trace.
//
//   bench_profiler [--rounds N] [--steps N] [--batch PROMPTS] [--every N] [--cores 0,1]
#include "bench/bench_record.h"
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
  double mean_step_s = 0;        // every timed step
  double median_profiled_s = 0;  // the profiled steps only (the unprofiled run: all)
  double median_other_s = 0;     // the steps not profiled (the unprofiled run: all)
  double mean_other_s = 0;
  int64_t profile_bytes = 0;  // RLWB's rows, or the Kineto traces' files
  int64_t profiled_steps = 0;
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

ModeRun run_mode(const std::string& mode, int steps, int batch, int every, const std::string& db) {
  std::vector<std::string> overrides = {"trainer.steps=" + std::to_string(steps + kWarmupSteps),
                                        "~trainer.warm_start",
                                        "~trainer.eval",
                                        "~trainer.save",
                                        "~trainer.samples",
                                        "task.batch_size=" + std::to_string(batch),
                                        "models.actor.config.ppo.mini_batch_size=0"};
  const std::string timed = std::to_string(kWarmupSteps + 1) + "-";
  const std::string each = "profile.every=" + std::to_string(every);
  if (mode == "rlwb")
    overrides.insert(overrides.end(), {"profile.enabled=true", "profile.steps=" + timed, each});
  if (mode == "kineto")
    overrides.insert(overrides.end(),
                     {"profile.enabled=true", "profile.steps=" + timed, each, "profile.engine=kineto"});
  Experiment exp =
      load_experiment_file(std::string(RLWB_SOURCE_DIR) + "/experiments/default.yaml", overrides);
  ControllerOptions options = rlwb::app::controller_options();
  options.worker_binary = RLWB_WORKER_BIN;
  options.log_dir = (std::filesystem::temp_directory_path() / ("rlwb-bench-profiler-" + mode)).string();
  std::vector<double> step_s, profiled_s, other_s;
  options.hooks.step_done = [&](const StepReport& r, const auto&) {
    if (r.step <= kWarmupSteps) return;
    step_s.push_back(r.seconds);
    const bool profiled = (r.step - kWarmupSteps - 1) % every == 0;
    if (mode == "off" || profiled) profiled_s.push_back(r.seconds);
    if (mode == "off" || !profiled) other_s.push_back(r.seconds);
  };
  TrackingWriter tracking(db);
  Controller controller(exp, options, &tracking);
  RunResult result = controller.run();
  tracking.flush();
  if (result.status != "finished")
    throw std::runtime_error("bench_profiler: the " + mode + " run " + result.status + ": " + result.error);
  ModeRun out;
  double sum = 0;
  for (double v : step_s) sum += v;
  out.mean_step_s = step_s.empty() ? 0 : sum / step_s.size();
  double other_sum = 0;
  for (double v : other_s) other_sum += v;
  out.mean_other_s = other_s.empty() ? 0 : other_sum / other_s.size();
  out.median_profiled_s = median(profiled_s);
  out.median_other_s = median(other_s);
  out.profiled_steps = static_cast<int64_t>(profiled_s.size());
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
  int rounds = 5, steps = 20, batch = 64, every = 10;
  std::string cores = "0,1";
  CLI::App app{
      "bench_profiler: step time with profiling off, RLWB's profiler and torch's (Kineto); "
      "profile size next to Kineto's trace",
      "bench_profiler"};
  app.option_defaults()->always_capture_default();
  app.add_option("--rounds", rounds, "interleaved rounds of the three modes")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps per run (after 3 untimed)")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "prompts per step")->check(CLI::PositiveNumber);
  app.add_option("--every", every, "profile.every: one step in this many profiled (the default 10)")
      ->check(CLI::PositiveNumber);
  app.add_option("--cores", cores, "the cores every process is pinned to");
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  pin_to(cores);
  const auto dir = std::filesystem::temp_directory_path() / "rlwb-bench-profiler";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string db = (dir / "bench.db").string();
  const std::vector<std::string> modes = {"off", "rlwb", "kineto"};
  std::printf(
      "default experiment, %d prompts per step, %d timed steps per run, one in %d profiled, cores %s\n",
      batch, steps, every, cores.c_str());
  std::printf("%-6s %8s %8s %8s %8s %8s %8s %8s %10s %10s %10s %10s %11s %12s %8s\n", "round", "off ms",
              "rlwb ms", "kin. ms", "rlwb +%", "kin. +%", "rlwb in", "kin. in", "rlwb prof", "kin. prof",
              "rlwb other", "kin. other", "rlwb bytes", "kineto bytes", "smaller");
  std::vector<double> rlwb_over, kineto_over, rlwb_in_run, kineto_in_run, rlwb_step, kineto_step, rlwb_other,
      kineto_other, size_ratio, off_ms;
  for (int round = 0; round < rounds; ++round) {
    ModeRun r[3];
    for (int k = 0; k < 3; ++k) {
      const int m = (round + k) % 3;  // rotate who goes first
      r[m] = run_mode(modes[m], steps, batch, every, db);
    }
    auto over = [&](double a, double b) { return 100 * (a / b - 1); };
    rlwb_over.push_back(over(r[1].mean_step_s, r[0].mean_step_s));
    kineto_over.push_back(over(r[2].mean_step_s, r[0].mean_step_s));
    rlwb_in_run.push_back(over(r[1].mean_step_s, r[1].mean_other_s));
    kineto_in_run.push_back(over(r[2].mean_step_s, r[2].mean_other_s));
    off_ms.push_back(1000 * r[0].mean_step_s);
    rlwb_step.push_back(over(r[1].median_profiled_s, r[0].median_profiled_s));
    kineto_step.push_back(over(r[2].median_profiled_s, r[0].median_profiled_s));
    rlwb_other.push_back(over(r[1].median_other_s, r[0].median_other_s));
    kineto_other.push_back(over(r[2].median_other_s, r[0].median_other_s));
    size_ratio.push_back(r[1].profile_bytes > 0 ? double(r[2].profile_bytes) / r[1].profile_bytes : 0);
    std::printf(
        "%-6d %8.1f %8.1f %8.1f %7.1f%% %7.1f%% %7.1f%% %7.1f%% %9.1f%% %9.1f%% %9.1f%% %9.1f%% %11lld "
        "%12lld "
        "%7.0fx\n",
        round + 1, 1000 * r[0].mean_step_s, 1000 * r[1].mean_step_s, 1000 * r[2].mean_step_s,
        rlwb_over.back(), kineto_over.back(), rlwb_in_run.back(), kineto_in_run.back(), rlwb_step.back(),
        kineto_step.back(), rlwb_other.back(), kineto_other.back(),
        static_cast<long long>(r[1].profile_bytes), static_cast<long long>(r[2].profile_bytes),
        size_ratio.back());
    std::fflush(stdout);
  }
  auto spread = [](const char* what, const std::vector<double>& v) {
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    std::printf("%-40s median %6.1f%%  min %6.1f%%  max %6.1f%%\n", what, median(v), *lo, *hi);
    return *hi;
  };
  const double worst = spread("RLWB at the defaults, run overhead", rlwb_over);
  spread("Kineto on the same steps, run overhead", kineto_over);
  const double worst_in_run = spread("RLWB at the defaults, in-run overhead", rlwb_in_run);
  spread("Kineto on the same steps, in-run overhead", kineto_in_run);
  spread("RLWB, a profiled step (median)", rlwb_step);
  spread("Kineto, a profiled step (median)", kineto_step);
  spread("RLWB, the steps not profiled (median)", rlwb_other);
  spread("Kineto, the steps not profiled (median)", kineto_other);
  const double smallest_ratio = *std::min_element(size_ratio.begin(), size_ratio.end());
  auto [off_lo, off_hi] = std::minmax_element(off_ms.begin(), off_ms.end());
  std::printf("noise: the unprofiled runs' mean step time spans %.1f%% across rounds (%.1f..%.1f ms)\n",
              100 * (*off_hi / *off_lo - 1), *off_lo, *off_hi);
  std::printf("goal: RLWB under 3%% at the defaults in every round, between runs: %s (worst %.1f%%)\n",
              worst < 3 ? "met" : "NOT met", worst);
  std::printf("goal: RLWB under 3%% at the defaults in every round, in-run: %s (worst %.1f%%)\n",
              worst_in_run < 3 ? "met" : "NOT met", worst_in_run);
  std::printf(
      "goal: RLWB's profile >= 100x smaller than Kineto's traces in every round: %s (median %.0fx, min "
      "%.0fx)\n",
      smallest_ratio >= 100 ? "met" : "NOT met", median(size_ratio), smallest_ratio);
  // Overheads as percentages, one per round; the "ratio" of each is RLWB's step time over the unprofiled one.
  auto as_ratios = [](const std::vector<double>& percent) {
    std::vector<double> r;
    for (double p : percent) r.push_back(1 + p / 100);
    return r;
  };
  rlwb::bench::record_figure({.key = "profiler/overhead_in_run",
                              .title = "profiler overhead at the defaults, in-run (`bench_profiler`)",
                              .value = median(rlwb_in_run),
                              .unit = "% of step time",
                              .peer = "Kineto on the same steps",
                              .peer_value = median(kineto_in_run),
                              .pair_ratios = as_ratios(rlwb_in_run),
                              .higher_is_better = false,
                              .goal = "< 3% every round",
                              .met = worst_in_run < 3});
  rlwb::bench::record_figure({.key = "profiler/size",
                              .title = "profile size vs Kineto's traces, same steps (`bench_profiler`)",
                              .value = median(size_ratio),
                              .unit = "x smaller",
                              .peer = "Kineto's traces of the same steps",
                              .peer_value = std::nullopt,
                              .pair_ratios = size_ratio,
                              .higher_is_better = true,
                              .goal = ">= 100x smaller every round",
                              .met = smallest_ratio >= 100});
  return 0;
}
