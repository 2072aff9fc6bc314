// One full GRPO step -- generate n samples per prompt, reference log-probs,
// rewards, advantages, one actor update -- RLWB's default experiment vs
// TRL's GRPOTrainer on the same tiny random Llama (char tokenizer, the
// arithmetic prompts, exact-match reward, KL coefficient, lr), side by side
// in one run. Figure: tokens/s (prompt + response tokens of the step / step
// wall time). Goal: at least 3x TRL's best layout in every pair.
//
// Fair by construction: this process and every process it starts (RLWB's
// workers, TRL's processes) are pinned to the same cores (--cpus). Each
// side runs in two layouts and each pair compares the faster of each:
// RLWB as the default experiment has it, 2 data-parallel worker processes
// x 1 thread, and as one worker x 2 threads (pools.train.threads=2, dp 1:
// no gradient all-reduce); TRL as 1 process x 2 threads and 2 processes x
// 1 thread (DDP over Gloo, through torchrun). The runs are interleaved
// (RLWB 2x1, RLWB 1x2, TRL 1x2, TRL 2x1, RLWB 2x1, ...) for --pairs pairs;
// every pair's ratio is printed (with the fastest, median and slowest of
// RLWB's timed steps in its faster run), then the minimum, median and
// maximum. RLWB's per-node times per layout (median wall and compute ms
// over every timed step) show where its step goes.
//
//   bench_grpo_step [--prompts 16] [--n 8] [--steps 8] [--warmup 2] [--pairs 10] [--cpus 0,1]
#include "bench/bench_grpo_common.h"
#include "bench/bench_record.h"
#include "core/common/command_line.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

using namespace rlwb::core;
using rlwb::bench::median_of;

int main(int argc, char** argv) {
  int prompts = 16, n = 8, steps = 8, warmup = 2, pairs = 10;
  std::vector<int> cpus = {0, 1};
  CLI::App app{
      "bench_grpo_step: one full GRPO step, RLWB's default experiment vs TRL's "
      "GRPOTrainer, each in its best layout, tokens/s, in interleaved pinned pairs",
      "bench_grpo_step"};
  app.option_defaults()->always_capture_default();
  app.add_option("--prompts", prompts, "prompts per step")->check(CLI::PositiveNumber);
  app.add_option("--n", n, "samples per prompt")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps of each run")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  app.add_option("--pairs", pairs, "interleaved RLWB / TRL pairs")->check(CLI::PositiveNumber);
  app.add_option("--cpus", cpus, "the cores both sides are pinned to")->delimiter(',');
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  if ((prompts * n) % 2 != 0) {
    std::fprintf(stderr,
                 "bench_grpo_step: --prompts x --n must be even: TRL's 2-process layout splits the rows\n");
    return 2;
  }
  const Experiment exp = rlwb::bench::grpo_step_experiment(prompts, n, steps + warmup);
  const Experiment one_worker =
      rlwb::bench::grpo_step_experiment(prompts, n, steps + warmup,
                                        {"pools.train.workers=1", "+pools.train.threads=2",
                                         "models.actor.parallel.dp=1", "models.ref.parallel.dp=1"});
  // The actor's settings as the run will use them (core/config), for the header.
  const auto actor = rlwb::core::config::parse_experiment_options(exp).models.at("actor");
  const auto& arch = *actor.model;
  const int64_t max_new = actor.rollout.max_new_tokens;
  rlwb::bench::pin_to_cores(cpus);
  auto str = [](auto v) { return std::to_string(v); };
  auto run_trl = [&](int processes, int threads) {
    return rlwb::bench::run_trl(exp, steps, warmup, processes, threads);
  };

  std::printf(
      "GRPO step on arithmetic: %d prompts x %d samples, %lld new tokens max, hidden %d, %d layers; "
      "%d timed steps after %d warm-up per run; %d interleaved pairs, every process pinned to cores %s\n",
      prompts, n, static_cast<long long>(max_new), static_cast<int>(arch.hidden_size),
      static_cast<int>(arch.num_layers), steps, warmup, pairs, rlwb::bench::core_list(cpus).c_str());
  std::printf("%5s %15s %15s %15s %15s %10s   %s\n", "pair", "RLWB 2x1 tok/s", "RLWB 1x2 tok/s",
              "TRL 1x2 tok/s", "TRL 2x1 tok/s", "best/best", "RLWB step ms: min median max");
  std::vector<double> ratios, rlwb_tps, trl_best, rlwb_step_ms;
  std::map<std::string, std::vector<double>> node_ms;  // "<layout> <metric>" -> ms
  std::map<std::string, int> rlwb_faster;              // RLWB's layout -> pairs it was the faster in
  std::string trl_version = "?";
  for (int pair = 1; pair <= pairs; ++pair) {
    rlwb::bench::RlwbRun rlwb_2x1, rlwb_1x2;
    try {
      rlwb_2x1 = rlwb::bench::run_rlwb(exp, warmup);
      rlwb_1x2 = rlwb::bench::run_rlwb(one_worker, warmup);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "bench_grpo_step: %s\n", e.what());
      return 1;
    }
    for (auto& [k, v] : rlwb_2x1.node_ms)
      node_ms["2x1 " + k].insert(node_ms["2x1 " + k].end(), v.begin(), v.end());
    for (auto& [k, v] : rlwb_1x2.node_ms)
      node_ms["1x2 " + k].insert(node_ms["1x2 " + k].end(), v.begin(), v.end());
    const rlwb::bench::RlwbRun& rlwb = rlwb_1x2.tokens_per_s > rlwb_2x1.tokens_per_s ? rlwb_1x2 : rlwb_2x1;
    ++(rlwb_1x2.tokens_per_s > rlwb_2x1.tokens_per_s ? rlwb_faster["1x2"] : rlwb_faster["2x1"]);
    const nlohmann::json threads = run_trl(1, 2), processes = run_trl(2, 1);
    for (const auto* trl : {&threads, &processes})
      if (trl->contains("error")) {
        std::fprintf(stderr, "bench_grpo_step: TRL not measured: %s\n",
                     (*trl)["error"].get<std::string>().c_str());
        return 1;
      }
    trl_version = threads.value("trl_version", trl_version);
    const double trl_1x2 = threads.value("tokens_per_s", 0.0), trl_2x1 = processes.value("tokens_per_s", 0.0);
    const double best = std::max(trl_1x2, trl_2x1);
    ratios.push_back(rlwb.tokens_per_s / best);
    rlwb_tps.push_back(rlwb.tokens_per_s);
    rlwb_step_ms.push_back(rlwb.step_s * 1e3);
    trl_best.push_back(best);
    std::vector<double> steps = rlwb.steps_s;
    std::sort(steps.begin(), steps.end());
    std::printf("%5d %15.0f %15.0f %15.0f %15.0f %9.2fx   %.1f %.1f %.1f\n", pair, rlwb_2x1.tokens_per_s,
                rlwb_1x2.tokens_per_s, trl_1x2, trl_2x1, ratios.back(),
                steps.empty() ? 0.0 : steps.front() * 1e3, rlwb.step_s * 1e3,
                steps.empty() ? 0.0 : steps.back() * 1e3);
    std::fflush(stdout);
  }
  std::printf(
      "RLWB per node, ms (median over every timed step; timing = wall time of the node, compute = "
      "the method's own time):\n");
  for (auto& [k, v] : node_ms) std::printf("  %-28s %8.1f\n", k.c_str(), median_of(v));
  // The step holds more than its nodes: choosing the prompts, the metrics,
  // the time between one node's end and the next one's start.
  std::printf("  %-28s %8.1f  (median over the pairs of each run's median step)\n", "step wall time",
              median_of(rlwb_step_ms));
  const double least = *std::min_element(ratios.begin(), ratios.end());
  const double most = *std::max_element(ratios.begin(), ratios.end());
  std::printf(
      "TRL %s; medians: RLWB's best layout %.0f tokens/s (1x2 the faster in %d pairs, 2x1 in %d), TRL's best "
      "layout %.0f tokens/s\n",
      trl_version.c_str(), median_of(rlwb_tps), rlwb_faster["1x2"], rlwb_faster["2x1"], median_of(trl_best));
  std::printf(
      "ratio RLWB's best / TRL's best layout over %d pairs: min %.2fx, median %.2fx, max %.2fx (spread "
      "%.2f); "
      "goal >= 3x in every pair: %s\n",
      pairs, least, median_of(ratios), most, most - least, least >= 3.0 ? "met" : "not met");
  rlwb::bench::record_figure(
      {.key = "grpo_step/vs_trl",
       .title = "GRPO step, " + str(prompts) + " prompts x " + str(n) +
                " samples, RLWB faster of 2x1 processes / 1x2 threads (`bench_grpo_step`)",
       .value = median_of(rlwb_tps),
       .unit = "tokens/s",
       .peer = "TRL " + trl_version + ", faster of 1x2 threads / 2x1 processes",
       .peer_value = median_of(trl_best),
       .pair_ratios = ratios,
       .goal = ">= 3x in every pair",
       .met = least >= 3.0});
  return 0;
}
