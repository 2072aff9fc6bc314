// Benchmark: one training step (forward, next-token cross-entropy, backward,
// AdamW) of RLWB's Transformer vs the same model in PyTorch eager from
// Python -- both a hand-written PyTorch module of the same architecture and
// HF transformers' LlamaForCausalLM -- same weights, batch, sequence length
// and CPU threads. Goal: no slower.
//   bench_train_step [--batch 8] [--seq 128] [--threads 2] [--steps 5] [--rounds 2]
// The sides take turns (--rounds times); each reports its fastest step in
// wall time and in CPU time, so a burst of load on a shared machine does not
// decide the ratio.
// Python side: bench/bench_train_step_torch.py.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "bench/bench_model_common.h"
#include "core/common/command_line.h"
#include "workers/model/flat_adamw.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/safetensors.h"

using namespace rlwb::workers::model;
using namespace rlwb::bench;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int64_t batch = 8, seq = 128, threads = 2, steps = 5, rounds = 2;
  CLI::App app{
      "bench_train_step: one training step of RLWB's model vs PyTorch eager and HF on "
      "the same tiny Llama",
      "bench_train_step"};
  app.option_defaults()->always_capture_default();
  app.add_option("--batch", batch, "sequences per step")->check(CLI::PositiveNumber);
  app.add_option("--seq", seq, "tokens per sequence")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads of each side")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "steps per round; the fastest counts")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "turns each side takes")->check(CLI::PositiveNumber);
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  at::set_num_threads(static_cast<int>(threads));
  const TransformerConfig config = bench_llama_config();
  torch::manual_seed(0);
  Transformer model(config);
  model->train();
  const auto dir =
      std::filesystem::temp_directory_path() / ("rlwb-bench-train-" + std::to_string(::getpid()));
  save_hf_checkpoint(model, dir);
  torch::Tensor ids = torch::randint(1, config.vocab_size, {batch, seq}, torch::kInt64);
  write_safetensors(dir / "batch.safetensors", {{"input_ids", ids}});

  // RLWB's optimizer, as its roles train (TrainState): AdamW over flat
  // buffers, the same update as torch.optim.AdamW on the Python side.
  FlatAdamW optimizer(model->parameters(), AdamWSettings{0.9, 0.999, 1e-8, 0.01});
  const torch::Tensor targets = ids.narrow(1, 1, seq - 1).reshape({-1});
  auto step = [&] {
    optimizer.zero_grad();
    torch::Tensor logits = model->forward(ids, torch::Tensor());
    torch::Tensor loss = torch::nn::functional::cross_entropy(
        logits.narrow(1, 0, seq - 1).reshape({-1, config.vocab_size}), targets);
    loss.backward();
    optimizer.flat_gradients();  // re-points any gradient autograd replaced
    optimizer.step(1e-4);
    return loss.item<double>();
  };
  step();
  step();  // warm-up: optimizer state allocated
  double ours = 1e30, ours_cpu = 1e30;
  nlohmann::json ref;
  for (int64_t round = 0; round < rounds; ++round) {
    for (int64_t s = 0; s < steps; ++s) {
      const auto t0 = Clock::now();
      const double c0 = cpu_seconds();
      step();
      ours_cpu = std::min(ours_cpu, cpu_seconds() - c0);
      ours = std::min(ours, std::chrono::duration<double>(Clock::now() - t0).count());
    }
    nlohmann::json one = run_reference("bench_train_step_torch.py",
                                       {dir.string(), std::to_string(threads), std::to_string(steps)});
    if (one.contains("error")) {
      ref = one;
      break;
    }
    if (ref.is_null()) {
      ref = one;
    } else {
      for (const char* key : {"torch", "hf", "torch_cpu", "hf_cpu"}) {
        ref[key] = std::min(ref[key].get<double>(), one[key].get<double>());
      }
    }
  }
  std::filesystem::remove_all(dir);

  std::printf("bench_train_step: %s\n", describe(config).c_str());
  std::printf(
      "batch %lld x %lld tokens, forward + cross-entropy + backward + AdamW, %lld CPU threads, fastest of "
      "%lld steps x %lld rounds\n\n",
      static_cast<long long>(batch), static_cast<long long>(seq), static_cast<long long>(threads),
      static_cast<long long>(steps), static_cast<long long>(rounds));
  std::printf(
      "| implementation | ms/step (wall) | tokens/s | RLWB speed-up | CPU ms/step | RLWB speed-up (CPU) |\n"
      "|---|---:|---:|---:|---:|---:|\n");
  const double tokens = static_cast<double>(batch * seq);
  std::printf("| RLWB Transformer (C++) | %s | %s | - | %s | - |\n", fixed(ours * 1e3).c_str(),
              fixed(tokens / ours, 0).c_str(), fixed(ours_cpu * 1e3).c_str());
  if (ref.contains("error")) {
    std::printf("\nreference unavailable: %s\n", ref["error"].get<std::string>().c_str());
    return 1;
  }
  bool met = true, met_cpu = true;
  for (const auto& [name, label] : {std::pair{"torch", "PyTorch eager, same architecture (Python)"},
                                    std::pair{"hf", "HF LlamaForCausalLM, eager (Python)"}}) {
    const double theirs = ref[name].get<double>();
    const double theirs_cpu = ref[std::string(name) + "_cpu"].get<double>();
    met = met && ours <= theirs;
    met_cpu = met_cpu && ours_cpu <= theirs_cpu;
    std::printf("| %s | %s | %s | %sx | %s | %sx |\n", label, fixed(theirs * 1e3).c_str(),
                fixed(tokens / theirs, 0).c_str(), fixed(theirs / ours, 2).c_str(),
                fixed(theirs_cpu * 1e3).c_str(), fixed(theirs_cpu / ours_cpu, 2).c_str());
  }
  std::printf("\ntorch %s, transformers %s; goal no slower: %s (wall), %s (CPU)\n",
              ref["torch_version"].get<std::string>().c_str(),
              ref["transformers_version"].get<std::string>().c_str(), met ? "met" : "NOT met",
              met_cpu ? "met" : "NOT met");
  return 0;
}
