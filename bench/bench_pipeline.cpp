// Benchmark: a pass of a model split into pipeline stages
// (workers/model/pipeline_parallel.h), its rows run as several pipeline
// micro-batches (GPipe: every stage works on another micro-batch at once)
// against the same stages with one micro-batch (the stages take turns: the
// schedule before, and the floor this one must beat). Each rank is a
// thread of this process with one torch thread and real c10d Gloo groups
// over loopback (workers/mesh_groups.h), all pinned to --cpus; the model is
// the tiny Llama of the other model benchmarks with --layers blocks.
//   bench_pipeline [--pp 2] [--micro-batches 4] [--rows 16] [--seq 64] [--layers 4]
//                  [--passes 3] [--rounds 5] [--cpus 0,1]
// Two passes are timed: training (forward, next-token cross-entropy,
// backward) and inference (forward, no gradients: reference log-probs).
// A round times both schedules, in turn (the order alternating), each its
// fastest of --passes, a pass's time the slowest stage's; every round's
// ratio (one micro-batch / several) is printed, then the minimum and the
// median. The whole model in one thread on one core is printed beside,
// the cost the stages split.
#include <torch/torch.h>

#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_model_common.h"
#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "core/mesh/mesh.h"
#include "workers/mesh_groups.h"
#include "workers/model/pipeline_parallel.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

using namespace rlwb::workers;
using namespace rlwb::workers::model;
using namespace rlwb::bench;
using Clock = std::chrono::steady_clock;

namespace {

struct Shape {
  int64_t rows = 16, seq = 64;
};

// One pass; returns its seconds on this rank.
double pass(Transformer& net, const torch::Tensor& ids, bool training) {
  const auto start = Clock::now();
  const int64_t vocab = net->config().vocab_size, seq = ids.size(1);
  if (training) {
    net->zero_grad();
    torch::Tensor logits = net->forward(ids, torch::Tensor());
    torch::nn::functional::cross_entropy(logits.narrow(1, 0, seq - 1).reshape({-1, vocab}),
                                         ids.narrow(1, 1, seq - 1).reshape({-1}))
        .backward();
  } else {
    torch::NoGradGuard no_grad;
    torch::Tensor logits = net->forward(ids, torch::Tensor());
    torch::log_softmax(logits, -1).max().item<float>();
  }
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The slowest stage's fastest of `passes`: the stages start each pass
// together (a barrier) and the pass ends when the last one ends.
double timed(Transformer& net, SpmdGroup& pool, const torch::Tensor& ids, bool training, int passes) {
  double best = 1e30;
  for (int i = 0; i < passes; ++i) {
    pool.barrier();
    torch::Tensor seconds = torch::tensor({pass(net, ids, training)}, torch::kFloat64);
    pool.all_reduce_max(seconds);
    best = std::min(best, seconds.item<double>());
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int pp = 2, micro_batches = 4, layers = 4, passes = 3, rounds = 5;
  Shape shape;
  std::vector<int> cpus = {0, 1};
  CLI::App app{"bench_pipeline: pipeline stages with several micro-batches in flight vs one",
               "bench_pipeline"};
  app.option_defaults()->always_capture_default();
  app.add_option("--pp", pp, "pipeline stages (ranks, threads)")->check(CLI::Range(2, 8));
  app.add_option("--micro-batches", micro_batches, "pipeline micro-batches of a pass")
      ->check(CLI::Range(2, 64));
  app.add_option("--rows", shape.rows, "rows per pass")->check(CLI::PositiveNumber);
  app.add_option("--seq", shape.seq, "tokens per row")->check(CLI::Range(2, 1024));
  app.add_option("--layers", layers, "blocks of the model (at least --pp)")->check(CLI::PositiveNumber);
  app.add_option("--passes", passes, "passes per schedule and round; the fastest counts")
      ->check(CLI::PositiveNumber);
  app.add_option("--rounds", rounds, "interleaved rounds")->check(CLI::PositiveNumber);
  app.add_option("--cpus", cpus, "the cores every rank is pinned to")->delimiter(',');
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  if (layers < pp) {
    std::fprintf(stderr,
                 "bench_pipeline: --layers %d is fewer than --pp %d stages; give each stage a layer\n",
                 layers, pp);
    return 2;
  }
  pin_to_cores(cpus);
  at::set_num_threads(1);
  TransformerConfig config = bench_llama_config();
  config.num_layers = layers;
  torch::manual_seed(0);
  const torch::Tensor ids = torch::randint(1, config.vocab_size, {shape.rows, shape.seq}, torch::kInt64);
  // Every rank's two models (one per schedule) and the whole model, with
  // the same weights, made here: the random generator is this thread's.
  std::vector<Transformer> one(pp, nullptr), many(pp, nullptr);
  for (int r = 0; r < pp; ++r) {
    torch::manual_seed(1);
    one[r] = Transformer(config);
    torch::manual_seed(1);
    many[r] = Transformer(config);
  }
  torch::manual_seed(1);
  Transformer whole(config);

  std::printf("host: %s; %d stages (threads, 1 torch thread each) on CPUs %s; Gloo over loopback\n",
              cpu_model().c_str(), pp, core_list(cpus).c_str());
  std::printf("model: %s; a pass: %lld rows x %lld tokens\n", describe(config).c_str(),
              static_cast<long long>(shape.rows), static_cast<long long>(shape.seq));
  std::printf(
      "time = the slowest stage's, fastest of %d passes; ratio = one micro-batch / %d micro-batches\n\n",
      passes, micro_batches);

  struct Round {
    double one_train, many_train, one_infer, many_infer, whole_train, whole_infer;
  };
  std::vector<Round> results(rounds);
  const int port = free_loopback_ports(1).front();
  std::vector<std::string> errors(pp);
  std::vector<std::thread> threads;
  for (int rank = 0; rank < pp; ++rank)
    threads.emplace_back([&, rank] {
      try {
        SpmdGroup pool(SpmdOptions{"127.0.0.1", port, rank, pp, std::chrono::milliseconds(120000)});
        const rlwb::core::Mesh mesh{1, pp, 1};
        std::shared_ptr<MeshGroups> groups = make_mesh_groups(pool, mesh, "bench");
        one[rank]->shard_pipeline_parallel(groups->pipeline_parallel(rank, 1));
        many[rank]->shard_pipeline_parallel(groups->pipeline_parallel(rank, micro_batches));
        timed(one[rank], pool, ids, true, 1);  // warm-up: allocator, Gloo pairs
        timed(many[rank], pool, ids, true, 1);
        for (int r = 0; r < rounds; ++r) {
          Round& out = results[r];
          for (int turn = 0; turn < 2; ++turn) {
            const bool one_first = r % 2 == 0;
            Transformer& net = (turn == 0) == one_first ? one[rank] : many[rank];
            const double train = timed(net, pool, ids, true, passes);
            const double infer = timed(net, pool, ids, false, passes);
            if (rank != 0) continue;
            ((turn == 0) == one_first ? out.one_train : out.many_train) = train;
            ((turn == 0) == one_first ? out.one_infer : out.many_infer) = infer;
          }
          pool.barrier();  // the other stages wait while rank 0 runs the whole model alone
          if (rank == 0) {
            out.whole_train = out.whole_infer = 1e30;
            for (int i = 0; i < passes; ++i) {
              out.whole_train = std::min(out.whole_train, pass(whole, ids, true));
              out.whole_infer = std::min(out.whole_infer, pass(whole, ids, false));
            }
          }
          pool.barrier();
        }
      } catch (const std::exception& e) {
        errors[rank] = e.what();
      }
    });
  for (auto& t : threads) t.join();
  for (int rank = 0; rank < pp; ++rank)
    if (!errors[rank].empty()) {
      std::fprintf(stderr, "bench_pipeline: rank %d: %s\n", rank, errors[rank].c_str());
      return 1;
    }

  std::printf(
      "round   train: 1 mb ms  %d mb ms   ratio | infer: 1 mb ms  %d mb ms   ratio | whole model, 1 core: "
      "train  infer\n",
      micro_batches, micro_batches);
  std::vector<double> train_ratios, infer_ratios, many_train, one_train;
  for (int r = 0; r < rounds; ++r) {
    const Round& x = results[r];
    train_ratios.push_back(x.one_train / x.many_train);
    infer_ratios.push_back(x.one_infer / x.many_infer);
    many_train.push_back(x.many_train);
    one_train.push_back(x.one_train);
    std::printf("%5d   %14.1f  %8.1f  %6.2fx | %14.1f  %8.1f  %6.2fx | %26.1f  %5.1f\n", r + 1,
                x.one_train * 1e3, x.many_train * 1e3, train_ratios.back(), x.one_infer * 1e3,
                x.many_infer * 1e3, infer_ratios.back(), x.whole_train * 1e3, x.whole_infer * 1e3);
  }
  auto summary = [](const char* what, std::vector<double> v) {
    std::sort(v.begin(), v.end());
    std::printf("%s: min %.2fx  median %.2fx  max %.2fx\n", what, v.front(), v[v.size() / 2], v.back());
  };
  summary("training pass, one micro-batch / several", train_ratios);
  summary("inference pass, one micro-batch / several", infer_ratios);

  for (const bool training : {true, false}) {
    Figure f;
    f.key = std::string("pipeline/") + (training ? "train" : "infer") + "_pp" + std::to_string(pp);
    f.title = std::string(training ? "training" : "inference") + " pass at pp=" + std::to_string(pp) + ", " +
              std::to_string(micro_batches) + " pipeline micro-batches, " + std::to_string(shape.rows) +
              " x " + std::to_string(shape.seq) + " tokens (`bench_pipeline`)";
    std::vector<double> times;
    for (const Round& x : results) times.push_back(training ? x.many_train : x.many_infer);
    std::vector<double> floor;
    for (const Round& x : results) floor.push_back(training ? x.one_train : x.one_infer);
    f.value = median_of(times) * 1e3;
    f.unit = "ms";
    f.peer = "the same stages, one micro-batch (stages take turns)";
    f.peer_value = median_of(floor) * 1e3;
    for (double speedup : training ? train_ratios : infer_ratios) f.pair_ratios.push_back(1.0 / speedup);
    f.higher_is_better = false;  // a cost: several micro-batches' time / one's
    f.goal = "< 1x (faster) in every round";
    bool met = true;
    for (double r : f.pair_ratios) met = met && r < 1.0;
    f.met = met;
    record_figure(f);
  }
  return 0;
}
