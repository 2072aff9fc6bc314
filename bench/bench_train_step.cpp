// Benchmark: one training step (forward, next-token cross-entropy, backward,
// AdamW) of RLWB's Transformer vs the same model in PyTorch eager from
// Python -- both a hand-written PyTorch module of the same architecture and
// HF transformers' LlamaForCausalLM -- same weights, batch, sequence length
// and CPU threads, both pinned to the same cores (--cpus). The reference
// uses torch's faster AdamW on CPU (fused or foreach, whichever measures
// faster in that round). Goal: no slower.
//   bench_train_step [--batch 8] [--seq 128] [--threads 2] [--steps 5] [--rounds 2] [--cpus 0,1]
// The peer script stays up and the sides take turns step by step (RLWB,
// PyTorch eager, HF, ...); a pair (--rounds of them) is each side's fastest
// of --steps such steps, in wall time and in CPU time, and apart its
// fastest forward + backward and its fastest optimizer step. Every pair's
// ratios are printed, then their minimum and median. (Until session 31 a
// pair was RLWB's steps, then a fresh peer process's steps ten seconds
// later: the host's speed drifted by up to a third between the two.)
// Python side: bench/bench_train_step_torch.py.
#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "bench/bench_model_common.h"
#include "bench/served_peer.h"
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "workers/model/flat_adamw.h"
#include "workers/model/hf_checkpoint.h"
#include "workers/model/safetensors.h"

using namespace rlwb::workers::model;
using namespace rlwb::bench;
using Clock = std::chrono::steady_clock;

int main(int argc, char** argv) {
  int64_t batch = 8, seq = 128, threads = 2, steps = 5, rounds = 2;
  std::vector<int> cpus = {0, 1};
  CLI::App app{
      "bench_train_step: one training step of RLWB's model vs PyTorch eager and HF on "
      "the same tiny Llama",
      "bench_train_step"};
  app.option_defaults()->always_capture_default();
  app.add_option("--batch", batch, "sequences per step")->check(CLI::PositiveNumber);
  app.add_option("--seq", seq, "tokens per sequence")->check(CLI::PositiveNumber);
  app.add_option("--threads", threads, "CPU threads of each side")->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "steps per round; the fastest counts")->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "turns each side takes (interleaved pairs)")->check(CLI::PositiveNumber);
  app.add_option("--cpus", cpus, "the cores both sides are pinned to")->delimiter(',');
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  pin_to_cores(cpus);
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
  // One step; its forward + backward and its optimizer step timed apart.
  struct StepTimes {
    double wall, cpu, forward_backward, optimizer;
  };
  auto step = [&] {
    const auto t0 = Clock::now();
    const double c0 = cpu_seconds();
    optimizer.zero_grad();
    torch::Tensor logits = model->forward(ids, torch::Tensor());
    torch::Tensor loss = torch::nn::functional::cross_entropy(
        logits.narrow(1, 0, seq - 1).reshape({-1, config.vocab_size}), targets);
    loss.backward();
    loss.item<double>();
    optimizer.flat_gradients();  // re-points any gradient autograd replaced
    const auto t1 = Clock::now();
    optimizer.step(1e-4);
    const auto t2 = Clock::now();
    auto seconds = [](auto d) { return std::chrono::duration<double>(d).count(); };
    return StepTimes{seconds(t2 - t0), cpu_seconds() - c0, seconds(t1 - t0), seconds(t2 - t1)};
  };
  step();
  step();  // warm-up: optimizer state allocated
  // The peer stays up and runs one step per request, so the sides take
  // turns step by step: RLWB, PyTorch eager, HF, RLWB, ... (every other
  // step the peer goes first). A pair is each side's fastest of its
  // `steps` steps in that stretch: both saw the host in the same state.
  ServedPeer peer("bench_train_step_torch.py", {dir.string(), std::to_string(threads), std::to_string(steps)},
                  600.0);
  nlohmann::json failure = peer.ready().contains("error") ? peer.ready() : nlohmann::json();
  std::vector<StepTimes> ours;
  std::vector<nlohmann::json> refs;  // per pair: "<peer>[_part]" -> its fastest, as the old one-shot reply
  for (int64_t round = 0; round < rounds && failure.is_null(); ++round) {
    StepTimes best{1e30, 1e30, 1e30, 1e30};
    nlohmann::json ref = peer.ready();
    for (const char* key : {"torch", "hf"})
      for (const char* part : {"", "_cpu", "_forward_backward", "_optimizer"})
        ref[std::string(key) + part] = 1e30;
    auto peer_step = [&](const std::string& key) {
      const nlohmann::json r = peer.request(key, 120.0);
      if (r.contains("error")) {
        failure = r;
        return;
      }
      ref[key] = std::min(ref[key].get<double>(), r["wall"].get<double>());
      ref[key + "_cpu"] = std::min(ref[key + "_cpu"].get<double>(), r["cpu"].get<double>());
      ref[key + "_forward_backward"] =
          std::min(ref[key + "_forward_backward"].get<double>(), r["forward_backward"].get<double>());
      ref[key + "_optimizer"] = std::min(ref[key + "_optimizer"].get<double>(), r["optimizer"].get<double>());
    };
    for (int64_t s = 0; s < steps && failure.is_null(); ++s) {
      if (s % 2 == 1) peer_step("torch"), peer_step("hf");
      const StepTimes t = step();
      best = {std::min(best.wall, t.wall), std::min(best.cpu, t.cpu),
              std::min(best.forward_backward, t.forward_backward), std::min(best.optimizer, t.optimizer)};
      if (s % 2 == 0) peer_step("torch"), peer_step("hf");
    }
    ours.push_back(best);
    refs.push_back(ref);
  }
  std::filesystem::remove_all(dir);

  std::printf("bench_train_step: %s\n", describe(config).c_str());
  std::printf(
      "batch %lld x %lld tokens, forward + cross-entropy + backward + AdamW, %lld CPU threads, pinned to "
      "cores %s; %lld pairs, each side's fastest of %lld steps per pair, the sides taking turns step by "
      "step\n\n",
      static_cast<long long>(batch), static_cast<long long>(seq), static_cast<long long>(threads),
      core_list(cpus).c_str(), static_cast<long long>(rounds), static_cast<long long>(steps));
  if (!failure.is_null()) {
    std::printf("reference unavailable: %s\n", failure["error"].get<std::string>().c_str());
    return 1;
  }
  std::printf(
      "| pair | RLWB ms (wall) | RLWB fwd+bwd ms | RLWB AdamW ms | peer | peer ms (wall) | peer fwd+bwd ms | "
      "peer AdamW ms | speed-up wall | fwd+bwd | AdamW | CPU |\n"
      "|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const std::pair<const char*, const char*> peers[] = {{"torch", "PyTorch eager"}, {"hf", "HF Llama"}};
  std::map<std::string, std::vector<double>> speedups;  // "<peer> <part>" -> per-pair ratios
  for (size_t i = 0; i < ours.size(); ++i) {
    const StepTimes& o = ours[i];
    for (const auto& [key, label] : peers) {
      const nlohmann::json& r = refs[i];
      const std::string k = key;
      const double wall = r[k].get<double>(), fb = r[k + "_forward_backward"].get<double>(),
                   opt = r[k + "_optimizer"].get<double>(), cpu = r[k + "_cpu"].get<double>();
      speedups[k + " wall"].push_back(wall / o.wall);
      speedups[k + " fwd+bwd"].push_back(fb / o.forward_backward);
      speedups[k + " AdamW"].push_back(opt / o.optimizer);
      speedups[k + " CPU"].push_back(cpu / o.cpu);
      std::printf("| %zu | %s | %s | %s | %s (AdamW %s) | %s | %s | %s | %sx | %sx | %sx | %sx |\n", i + 1,
                  fixed(o.wall * 1e3).c_str(), fixed(o.forward_backward * 1e3).c_str(),
                  fixed(o.optimizer * 1e3, 2).c_str(), label, r[k + "_adamw"].get<std::string>().c_str(),
                  fixed(wall * 1e3).c_str(), fixed(fb * 1e3).c_str(), fixed(opt * 1e3, 2).c_str(),
                  fixed(wall / o.wall, 2).c_str(), fixed(fb / o.forward_backward, 2).c_str(),
                  fixed(opt / o.optimizer, 2).c_str(), fixed(cpu / o.cpu, 2).c_str());
    }
  }
  std::printf("\nRLWB speed-up over each peer, per part (min / median over the pairs):\n");
  bool met = true;
  for (const auto& [name, v] : speedups) {
    const double least = *std::min_element(v.begin(), v.end());
    if (name.ends_with(" wall")) met = met && least >= 1.0;
    std::printf("  %-16s min %sx  median %sx\n", name.c_str(), fixed(least, 2).c_str(),
                fixed(median_of(v), 2).c_str());
  }
  std::printf("\ntorch %s, transformers %s; goal no slower (wall, every pair): %s\n",
              refs.back()["torch_version"].get<std::string>().c_str(),
              refs.back()["transformers_version"].get<std::string>().c_str(), met ? "met" : "NOT met");
  // The table's rows: against PyTorch eager with its fastest AdamW, each part apart.
  const std::string torch_version = refs.back()["torch_version"].get<std::string>();
  const std::pair<const char*, double StepTimes::*> parts[] = {{"wall", &StepTimes::wall},
                                                               {"fwd+bwd", &StepTimes::forward_backward},
                                                               {"AdamW", &StepTimes::optimizer}};
  const char* peer_field[] = {"torch", "torch_forward_backward", "torch_optimizer"};
  for (size_t p = 0; p < 3; ++p) {
    std::vector<double> ours_ms, peer_ms;
    for (size_t i = 0; i < ours.size(); ++i) {
      ours_ms.push_back(ours[i].*parts[p].second * 1e3);
      peer_ms.push_back(refs[i][peer_field[p]].get<double>() * 1e3);
    }
    const auto& ratios = speedups[std::string("torch ") + parts[p].first];
    record_figure({.key = std::string("train_step/") + parts[p].first,
                   .title = std::string("training step, ") + parts[p].first + ", batch " +
                            std::to_string(batch) + " x " + std::to_string(seq) + ", " +
                            std::to_string(threads) + " threads (`bench_train_step`)",
                   .value = median_of(ours_ms),
                   .unit = "ms",
                   .peer = "PyTorch " + torch_version + " eager, fastest AdamW",
                   .peer_value = median_of(peer_ms),
                   .pair_ratios = ratios,
                   .goal = "no slower in every pair",
                   .met = *std::min_element(ratios.begin(), ratios.end()) >= 1.0});
  }
  return 0;
}
