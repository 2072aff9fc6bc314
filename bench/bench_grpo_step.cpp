// One full GRPO step -- generate n samples per prompt, reference log-probs,
// rewards, advantages, one actor update -- RLWB's default experiment vs
// TRL's GRPOTrainer on the same tiny random Llama (char tokenizer, the
// arithmetic prompts, exact-match reward, KL coefficient, lr), side by side
// in one run. RLWB runs its 2 data-parallel worker processes with one
// thread each; TRL gets 2 threads. Figure: tokens/s (prompt + response
// tokens of the step / step wall time). Goal: at least 3x TRL. RLWB's
// per-node times (median wall and compute ms) are printed too, to show
// where its step goes.
//
//   bench_grpo_step [--prompts 16] [--n 8] [--steps 8] [--warmup 2]
#include "bench/bench_model_common.h"
#include "core/common/command_line.h"
#include "core/config/experiment_options.h"
#include "core/controller/controller.h"
#include "app/registries.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

using namespace rlwb::core;

int main(int argc, char** argv) {
  int prompts = 16, n = 8, steps = 8, warmup = 2;
  CLI::App app{
      "bench_grpo_step: one full GRPO step, RLWB's default experiment vs TRL's "
      "GRPOTrainer, tokens/s",
      "bench_grpo_step"};
  app.option_defaults()->always_capture_default();
  app.add_option("--prompts", prompts, "prompts per step")->check(CLI::PositiveNumber);
  app.add_option("--n", n, "samples per prompt")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "timed steps")->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "untimed steps first")->check(CLI::NonNegativeNumber);
  if (auto exit_code = parse_command_line(app, argc, argv)) return *exit_code;
  Experiment exp = load_experiment_file(
      std::string(RLWB_SOURCE_DIR) + "/experiments/default.yaml",
      {"trainer.steps=" + std::to_string(steps + warmup), "~trainer.warm_start", "~trainer.eval",
       "~trainer.save", "~trainer.samples", "task.batch_size=" + std::to_string(prompts),
       "task.samples_per_prompt=" + std::to_string(n),
       "models.actor.config.ppo.mini_batch_size=" + std::to_string(prompts * n)});
  // The actor's settings as the run will use them (core/config), for the peer.
  const auto actor = rlwb::core::config::parse_experiment_options(exp).models.at("actor");
  const auto& arch = *actor.model;
  const int64_t max_new = actor.rollout.max_new_tokens;
  ControllerOptions options = rlwb::app::controller_options();
  options.worker_binary = RLWB_WORKER_BIN;
  options.log_dir = (std::filesystem::temp_directory_path() / "rlwb-bench-grpo").string();
  std::vector<double> seconds, tokens;
  std::map<std::string, std::vector<double>> node_ms;  // timing_s/<node> and compute_s/<node>, in ms
  options.hooks.step_done = [&](const StepReport& r, const auto&) {
    if (r.step <= warmup) return;
    seconds.push_back(r.seconds);
    tokens.push_back(r.metrics.at("perf/throughput") * r.seconds);
    for (const auto& [k, v] : r.metrics)
      if (k.starts_with("timing_s/") || k.starts_with("compute_s/")) node_ms[k].push_back(v * 1e3);
  };
  Controller controller(exp, options, nullptr);
  RunResult result = controller.run();
  if (result.status != "finished") {
    std::fprintf(stderr, "bench_grpo_step: RLWB run %s: %s\n", result.status.c_str(), result.error.c_str());
    return 1;
  }
  double s = 0, t = 0;
  for (size_t i = 0; i < seconds.size(); ++i) s += seconds[i], t += tokens[i];
  const double rlwb_tps = t / s;
  std::vector<double> sorted = seconds;
  std::sort(sorted.begin(), sorted.end());

  auto str = [](auto v) { return std::to_string(v); };
  nlohmann::json trl =
      rlwb::bench::run_reference("bench_grpo_trl.py", {"--prompts",
                                                       str(prompts),
                                                       "--num-generations",
                                                       str(n),
                                                       "--max-new-tokens",
                                                       str(max_new),
                                                       "--steps",
                                                       str(steps),
                                                       "--warmup",
                                                       str(warmup),
                                                       "--threads",
                                                       "2",
                                                       "--hidden",
                                                       str(arch.hidden_size),
                                                       "--intermediate",
                                                       str(arch.resolved_intermediate_size()),
                                                       "--layers",
                                                       str(arch.num_layers),
                                                       "--heads",
                                                       str(arch.num_heads),
                                                       "--kv-heads",
                                                       str(arch.resolved_kv_heads()),
                                                       "--lr",
                                                       str(actor.optim.lr),
                                                       "--beta",
                                                       str(actor.ppo.kl_loss_coef)});

  std::printf(
      "GRPO step on arithmetic: %d prompts x %d samples, %lld new tokens max, hidden %d, %d layers; "
      "%d timed steps after %d warm-up\n",
      prompts, n, static_cast<long long>(max_new), static_cast<int>(arch.hidden_size),
      static_cast<int>(arch.num_layers), steps, warmup);
  std::printf("%-36s %12s %12s\n", "", "step s (p50)", "tokens/s");
  std::printf("%-36s %12.3f %12.0f\n", "RLWB (2 workers x 1 thread)", sorted[sorted.size() / 2], rlwb_tps);
  std::printf("RLWB per node, ms (p50; timing = wall time of the node, compute = the method's own time):\n");
  for (auto& [k, v] : node_ms) {
    std::sort(v.begin(), v.end());
    std::printf("  %-28s %8.1f\n", k.c_str(), v[v.size() / 2]);
  }
  if (trl.contains("error")) {
    std::printf("TRL GRPOTrainer: not measured: %s\n", trl["error"].get<std::string>().c_str());
    return 0;
  }
  std::printf("%-36s %12.3f %12.0f\n",
              ("TRL " + trl.value("trl_version", std::string("?")) + " (2 threads)").c_str(),
              trl.value("step_s_median", 0.0), trl.value("tokens_per_s", 0.0));
  std::printf("ratio RLWB / TRL: %.2fx tokens/s (goal >= 3x)\n", rlwb_tps / trl.value("tokens_per_s", 1.0));
  return 0;
}
