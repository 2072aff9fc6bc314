// Benchmark: generation tokens/s of RLWB's generate() vs Hugging Face
// transformers' generate() on the same tiny random Llama (same weights: a
// checkpoint RLWB writes and transformers loads), same batch, prompt and
// response lengths, greedy, same number of CPU threads. Goal: >= 2x.
//   bench_generate [--batch 8] [--prompt 32] [--new 64] [--threads 2] [--repeats 3] [--rounds 2]
// The two sides take turns (--rounds times, each the best of --repeats
// calls) and each reports its best wall time and its best CPU time, so a
// burst of load on a shared machine does not decide the ratio.
// Python side: bench/bench_generate_hf.py with the RLWB venv's python
// ($RLWB_PYTHON to override).
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>

#include "bench/bench_model_common.h"
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "workers/model/generation.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/safetensors.h"

using namespace rlwb::workers::model;
using namespace rlwb::bench;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int64_t batch = 8, prompt = 32, max_new = 64, threads = 2, repeats = 3, rounds = 2;
  CLI::App app{
      "bench_generate: generation tokens/s of RLWB generate() vs Hugging Face "
      "transformers generate() on the same tiny Llama",
      "bench_generate"};
  app.option_defaults()->always_capture_default();
  app.add_option("--batch", batch, "prompts per call")->check(CLI::PositiveNumber);
  app.add_option("--prompt", prompt, "prompt tokens")->check(CLI::PositiveNumber);
  app.add_option("--new", max_new, "new tokens per response")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads of each side")->check(CLI::PositiveNumber);
  app.add_option("--repeats", repeats, "calls per round; the best counts")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "turns each side takes")->check(CLI::PositiveNumber);
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  at::set_num_threads(static_cast<int>(threads));
  const TransformerConfig config = bench_llama_config();
  torch::manual_seed(0);
  Transformer model(config);
  model->eval();
  const auto dir =
      std::filesystem::temp_directory_path() / ("rlwb-bench-generate-" + std::to_string(::getpid()));
  save_hf_checkpoint(model, dir);

  torch::Tensor ids = torch::randint(1, config.vocab_size, {batch, prompt}, torch::kInt64);
  torch::Tensor mask = torch::ones_like(ids);
  GenerationOptions options;
  options.sampling.greedy = true;
  options.max_new_tokens = max_new;
  write_safetensors(dir / "prompts.safetensors", {{"prompt_ids", ids}});
  generate(model, ids, mask, options);  // warm-up
  double best = 1e30, best_cpu = 1e30;
  GenerationResult result;
  nlohmann::json ref;
  double ref_best = 1e30, ref_best_cpu = 1e30;
  for (int64_t round = 0; round < rounds; ++round) {
    for (int64_t r = 0; r < repeats; ++r) {
      const auto t0 = Clock::now();
      const double c0 = cpu_seconds();
      result = generate(model, ids, mask, options);
      best_cpu = std::min(best_cpu, cpu_seconds() - c0);
      best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    nlohmann::json one = run_reference(
        "bench_generate_hf.py",
        {dir.string(), std::to_string(max_new), std::to_string(threads), std::to_string(repeats)});
    if (one.contains("error")) {
      ref = one;
      break;
    }
    ref = one;
    ref_best = std::min(ref_best, one["seconds"].get<double>());
    ref_best_cpu = std::min(ref_best_cpu, one["cpu_seconds"].get<double>());
  }
  const double ours = static_cast<double>(result.response_mask.sum().item<int64_t>()) / best;
  std::filesystem::remove_all(dir);

  std::printf("bench_generate: %s\n", describe(config).c_str());
  std::printf(
      "batch %lld, prompt %lld, new tokens %lld, greedy, %lld CPU threads, best of %lld calls x %lld "
      "rounds\n\n",
      static_cast<long long>(batch), static_cast<long long>(prompt), static_cast<long long>(max_new),
      static_cast<long long>(threads), static_cast<long long>(repeats), static_cast<long long>(rounds));
  const double tokens = static_cast<double>(result.response_mask.sum().item<int64_t>());
  std::printf(
      "| implementation | tokens/s (wall) | s per generate() | ratio | tokens/CPU-s | CPU s per generate() | "
      "ratio |\n"
      "|---|---:|---:|---:|---:|---:|---:|\n");
  if (ref.contains("error")) {
    std::printf("| RLWB generate() | %s | %s | - | %s | %s | - |\n", fixed(ours).c_str(),
                fixed(best, 3).c_str(), fixed(tokens / best_cpu).c_str(), fixed(best_cpu, 3).c_str());
    std::printf("\nreference unavailable: %s\n", ref["error"].get<std::string>().c_str());
    return 1;
  }
  std::printf("| RLWB generate() | %s | %s | %sx | %s | %s | %sx |\n", fixed(ours).c_str(),
              fixed(best, 3).c_str(), fixed(ref_best / best, 2).c_str(), fixed(tokens / best_cpu).c_str(),
              fixed(best_cpu, 3).c_str(), fixed(ref_best_cpu / best_cpu, 2).c_str());
  std::printf("| HF transformers %s generate() | %s | %s | 1.00x | %s | %s | 1.00x |\n",
              ref["version"].get<std::string>().c_str(), fixed(tokens / ref_best).c_str(),
              fixed(ref_best, 3).c_str(), fixed(tokens / ref_best_cpu).c_str(),
              fixed(ref_best_cpu, 3).c_str());
  const bool same = ref["tokens"].get<std::vector<std::vector<int64_t>>>().at(0) ==
                    std::vector<int64_t>(result.responses[0].data_ptr<int64_t>(),
                                         result.responses[0].data_ptr<int64_t>() + max_new);
  std::printf("\nsame greedy tokens (row 0): %s; goal >= 2x: %s (wall), %s (CPU)\n", same ? "yes" : "NO",
              ref_best / best >= 2.0 ? "met" : "NOT met", ref_best_cpu / best_cpu >= 2.0 ? "met" : "NOT met");
  record_figure({.key = "generate/vs_hf",
                 .title = "generation, batch " + std::to_string(batch) + ", " + std::to_string(max_new) +
                          " new tokens, greedy, " + std::to_string(threads) + " threads (`bench_generate`)",
                 .value = ours,
                 .unit = "tokens/s",
                 .peer = "HF transformers " + ref["version"].get<std::string>() + " generate()",
                 .peer_value = tokens / ref_best,
                 .pair_ratios = {ref_best / best},
                 .goal = ">= 2x (best of each side's rounds)",
                 .met = same && ref_best / best >= 2.0});
  return 0;
}
