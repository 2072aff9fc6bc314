// Orchestration overhead of the single controller: the wall time of a step
// of the default experiment (GRPO on arithmetic, no warm start or
// evaluation) next to its critical path -- the longest chain of node
// compute through the graph, a worker node counting its slowest rank's
// compute (what the method measured itself), a controller-side node
// (rewards, advantages) its own time. The rest is dispatch, ZeroMQ,
// serialisation and waiting. Goal: under 5% of the critical path.
//
//   bench_orchestration [--steps N] [--batch PROMPTS]
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/config/experiment_options.h"
#include "core/controller/controller.h"
#include "app/registries.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

using namespace rlwb::core;

namespace {

double process_cpu_seconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

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
  std::vector<double> wall, compute, critical, critical_rank0;
  struct Parts {
    double wall, compute, dispatch, collect, slowest_reply;
  };
  std::map<std::string, std::vector<Parts>> node_parts;  // where each node's wall time goes, per step
  // The controller's own CPU time over the timed steps (all its threads:
  // the graph runner, the RPC endpoint, ZeroMQ's I/O, reward threads; not
  // the workers'). On a host with as many cores as worker ranks, each
  // millisecond of it is taken from a rank.
  double cpu_at_first = 0, cpu_at_last = 0;
  options.hooks.step_done = [&](const StepReport& r, const auto&) {
    if (r.step == 3) cpu_at_first = process_cpu_seconds();
    if (r.step <= 3) return;  // warm-up: first calls allocate and fuse weights
    cpu_at_last = process_cpu_seconds();
    // Sum of compute, and the longest chain of compute through the graph
    // (nodes in file order are topologically sorted in these experiments).
    // A worker node's compute is its slowest rank's: the node cannot end
    // before that rank does, and the time the others wait is imbalance, not
    // orchestration. (Rank 0's alone, as the metrics carry it, would count
    // the slower rank's extra compute as overhead: printed beside it.)
    auto chain = [&](auto compute_of) {
      double sum = 0, longest = 0;
      std::map<std::string, double> done_at;  // column -> when its writer's compute chain ends
      for (auto& node : exp.nodes) {
        const double c = compute_of(node);
        double start = 0;
        for (auto& col : node.in) start = std::max(start, done_at.count(col) ? done_at[col] : 0.0);
        for (auto& col : node.out) done_at[col] = start + c;
        longest = std::max(longest, start + c);
        sum += c;
      }
      return std::make_pair(sum, longest);
    };
    auto [sum, longest] = chain([&](const NodeSpec& node) {
      for (const auto& t : r.timings)
        if (t.node == node.id) return t.slowest_compute();
      return 0.0;
    });
    auto rank0 = chain([&](const NodeSpec& node) {
      const bool in_workers = exp.models.count(node.target) > 0;
      const auto key = (in_workers ? "compute_s/" : "timing_s/") + node.id;
      return r.metrics.count(key) ? r.metrics.at(key) : 0.0;
    });
    for (const auto& t : r.timings) {
      auto& parts = node_parts[t.node];
      const double slowest_reply =
          t.ranks.empty() ? 0.0 : std::max_element(t.ranks.begin(), t.ranks.end(), [](auto& a, auto& b) {
                                    return a.reply_s < b.reply_s;
                                  })->reply_s;
      parts.push_back({t.wall(), t.slowest_compute(), t.dispatch_s, t.collect_s,
                       t.kind == "worker" ? slowest_reply : 0.0});
    }
    wall.push_back(r.seconds);
    compute.push_back(sum);
    critical.push_back(longest);
    critical_rank0.push_back(rank0.second);
  };
  Controller controller(exp, options, nullptr);
  RunResult result = controller.run();
  if (result.status != "finished") {
    std::fprintf(stderr, "bench_orchestration: run %s: %s\n", result.status.c_str(), result.error.c_str());
    return 1;
  }
  double w = 0, c = 0, cp = 0, cp0 = 0;
  for (size_t i = 0; i < wall.size(); ++i)
    w += wall[i], c += compute[i], cp += critical[i], cp0 += critical_rank0[i];
  std::printf("default experiment (%s), %d prompts x %d samples, %zu steps after 3 warm-up steps\n",
              exp.name.c_str(), batch,
              static_cast<int>(rlwb::core::config::parse_experiment_options(exp).task.samples_per_prompt),
              wall.size());
  std::printf("%-44s %10s\n", "", "ms/step");
  std::printf("%-44s %10.2f\n", "step wall time", 1000 * w / wall.size());
  std::printf("%-44s %10.2f\n", "sum of node compute (workers + controller)", 1000 * c / wall.size());
  std::printf("%-44s %10.2f\n", "longest compute chain (critical path)", 1000 * cp / wall.size());
  std::printf("%-44s %10.2f  (rank 0's compute only: %.1f%% overhead)\n", "  the same with rank 0's compute",
              1000 * cp0 / wall.size(), 100 * (w / cp0 - 1));
  std::printf("%-44s %10.2f  (all its threads)\n", "controller CPU time",
              1000 * (cpu_at_last - cpu_at_first) / wall.size());
  std::printf("%-44s %9.1f%%  (goal < 5%%)\n", "overhead vs sum of compute", 100 * (w / c - 1));
  std::printf("%-44s %9.1f%%  (nodes that overlap do not count twice)\n", "overhead vs critical path",
              100 * (w / cp - 1));
  std::printf(
      "\nper node, ms/step: wall = dispatch + (until the slowest reply: transfer, decode, compute, encode)\n"
      "+ collect + the rest (waking the controller, joining the columns); reply-cmp is negative\n"
      "when the first ranks computed while the controller still sent to the others\n");
  std::printf("  %-8s %8s %9s %9s %9s %9s %9s\n", "node", "wall", "compute", "dispatch", "reply-cmp",
              "collect", "rest");
  for (const auto& [node, v] : node_parts) {
    Parts m{0, 0, 0, 0, 0};
    for (const Parts& p : v)
      m.wall += p.wall, m.compute += p.compute, m.dispatch += p.dispatch, m.collect += p.collect,
          m.slowest_reply += p.slowest_reply;
    const double n = static_cast<double>(v.size()) / 1000;
    const double in_flight = m.slowest_reply > 0 ? m.slowest_reply - m.dispatch - m.compute : 0;
    const double rest = m.wall - (m.slowest_reply > 0 ? m.slowest_reply : m.compute) - m.collect;
    std::printf("  %-8s %8.2f %9.2f %9.2f %9.2f %9.2f %9.2f\n", node.c_str(), m.wall / n, m.compute / n,
                m.dispatch / n, in_flight / n, m.collect / n, rest / n);
  }
  std::vector<double> per_step;  // wall / critical path of each step
  for (size_t i = 0; i < wall.size(); ++i) per_step.push_back(wall[i] / critical[i]);
  rlwb::bench::record_figure({.key = "orchestration/critical_path",
                              .title = "orchestration overhead over the critical path, default experiment, " +
                                       std::to_string(batch) + " prompts (`bench_orchestration`)",
                              .value = 100 * (w / cp - 1),
                              .unit = "% of the critical path",
                              .peer = "the step's longest compute chain (slowest rank's compute): " +
                                      rlwb::bench::fixed(1000 * cp / wall.size()) + " ms",
                              .peer_value = std::nullopt,
                              .pair_ratios = per_step,
                              .higher_is_better = false,
                              .goal = "< 5%",
                              .met = w / cp - 1 < 0.05});
  return 0;
}
