// Orchestration overhead of the single controller: the wall time of a step
// of the default experiment (GRPO on arithmetic, no warm start or
// evaluation) next to the sum of its nodes' compute time -- what the worker
// methods measured themselves (compute_s/<node>) plus the controller-side
// nodes (rewards, advantages), which run in this process. The rest is
// dispatch, ZeroMQ, serialisation and waiting. Goal: under 5%.
//
//   bench_orchestration [--steps N] [--batch PROMPTS]
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/config/experiment_options.h"
#include "core/controller/controller.h"
#include "app/registries.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace rlwb::core;

int main(int argc, char** argv) {
  int steps = 30, batch = 64;
  CLI::App app{
      "bench_orchestration: the single controller's overhead, a step's wall time next "
      "to its nodes' compute time",
      "bench_orchestration"};
  app.option_defaults()->always_capture_default();
  app.add_option("--steps", steps, "timed steps (after 3 untimed)")->check(CLI::PositiveNumber);
  app.add_option("--batch", batch, "prompts per step")->check(CLI::PositiveNumber);
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  Experiment exp = load_experiment_file(
      std::string(RLWB_SOURCE_DIR) + "/experiments/default.yaml",
      {"trainer.steps=" + std::to_string(steps + 3), "~trainer.warm_start", "~trainer.eval", "~trainer.save",
       "~trainer.samples", "task.batch_size=" + std::to_string(batch),
       "models.actor.config.ppo.mini_batch_size=0"});
  ControllerOptions options = rlwb::app::controller_options();
  options.worker_binary = RLWB_WORKER_BIN;
  options.log_dir = (std::filesystem::temp_directory_path() / "rlwb-bench-orchestration").string();
  std::vector<double> wall, compute, critical;
  options.hooks.step_done = [&](const StepReport& r, const auto&) {
    if (r.step <= 3) return;  // warm-up: first calls allocate and fuse weights
    // Sum of compute, and the longest chain of compute through the graph
    // (nodes in file order are topologically sorted in these experiments).
    double sum = 0, longest = 0;
    std::map<std::string, double> done_at;  // column -> when its writer's compute chain ends
    for (auto& node : exp.nodes) {
      bool in_workers = exp.models.count(node.target) > 0;
      auto key = (in_workers ? "compute_s/" : "timing_s/") + node.id;
      double c = r.metrics.count(key) ? r.metrics.at(key) : 0.0;
      double start = 0;
      for (auto& col : node.in) start = std::max(start, done_at.count(col) ? done_at[col] : 0.0);
      for (auto& col : node.out) done_at[col] = start + c;
      longest = std::max(longest, start + c);
      sum += c;
    }
    wall.push_back(r.seconds);
    compute.push_back(sum);
    critical.push_back(longest);
  };
  Controller controller(exp, options, nullptr);
  RunResult result = controller.run();
  if (result.status != "finished") {
    std::fprintf(stderr, "bench_orchestration: run %s: %s\n", result.status.c_str(), result.error.c_str());
    return 1;
  }
  double w = 0, c = 0, cp = 0;
  for (size_t i = 0; i < wall.size(); ++i) w += wall[i], c += compute[i], cp += critical[i];
  std::printf("default experiment (%s), %d prompts x %d samples, %zu steps after 3 warm-up steps\n",
              exp.name.c_str(), batch,
              static_cast<int>(rlwb::core::config::parse_experiment_options(exp).task.samples_per_prompt),
              wall.size());
  std::printf("%-44s %10s\n", "", "ms/step");
  std::printf("%-44s %10.2f\n", "step wall time", 1000 * w / wall.size());
  std::printf("%-44s %10.2f\n", "sum of node compute (workers + controller)", 1000 * c / wall.size());
  std::printf("%-44s %10.2f\n", "longest compute chain (critical path)", 1000 * cp / wall.size());
  std::printf("%-44s %9.1f%%  (goal < 5%%)\n", "overhead vs sum of compute", 100 * (w / c - 1));
  std::printf("%-44s %9.1f%%  (nodes that overlap do not count twice)\n", "overhead vs critical path",
              100 * (w / cp - 1));
  std::vector<double> per_step;  // wall / critical path of each step
  for (size_t i = 0; i < wall.size(); ++i) per_step.push_back(wall[i] / critical[i]);
  rlwb::bench::record_figure({.key = "orchestration/critical_path",
                              .title = "orchestration overhead over the critical path, default experiment, " +
                                       std::to_string(batch) + " prompts (`bench_orchestration`)",
                              .value = 100 * (w / cp - 1),
                              .unit = "% of the critical path",
                              .peer = "the step's longest compute chain",
                              .peer_value = 1000 * cp / wall.size(),
                              .pair_ratios = per_step,
                              .higher_is_better = false,
                              .goal = "< 5%",
                              .met = w / cp - 1 < 0.05});
  return 0;
}
