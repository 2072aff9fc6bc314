#include "workers/calibration/device_calibration.h"

#include <ATen/Parallel.h>
#include <sched.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <chrono>
#include <fstream>
#include <functional>
#include <stdexcept>
#include <thread>

#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::calibration {
namespace {

using Clock = std::chrono::steady_clock;

// Median seconds of `repeats` runs of `work`, after one warm-up.
double median_seconds(int repeats, const std::function<void()>& work) {
  work();
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    work();
    times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
}

double host_memory_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  double kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return kib * 1024;
    in.ignore(1 << 10, '\n');
  }
  return 8.0 * (1 << 30);
}

// How many processes compute at full speed at once here, now: k forked
// processes each run the same fixed work; the parallelism is the work done
// per second by k over that of one, best over k = 1..max. Below the core
// count when other jobs hold cores (their load counts, as it will in runs).
double measured_parallelism(int max_processes) {
  auto work = [] {
    double x = 1.0;
    for (long i = 0; i < 60'000'000; ++i) x = x * 1.0000001 + 1e-9;
    return x;
  };
  auto seconds_for = [&](int k) {
    const auto t0 = Clock::now();
    std::vector<pid_t> children;
    for (int i = 0; i < k; ++i) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        volatile double sink = work();
        (void)sink;
        ::_exit(0);
      }
      if (pid > 0) children.push_back(pid);
    }
    for (pid_t pid : children) ::waitpid(pid, nullptr, 0);
    return std::chrono::duration<double>(Clock::now() - t0).count();
  };
  const double one = seconds_for(1);
  double best = 1.0;
  for (int k = 2; k <= max_processes; ++k) best = std::max(best, k * one / seconds_for(k));
  return best;
}

// Fits time = latency + bytes / bandwidth by least squares.
core::planner::CollectiveFit fit(int ranks, const std::vector<std::pair<double, double>>& bytes_seconds) {
  double n = bytes_seconds.size(), sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (auto [x, y] : bytes_seconds) sx += x, sy += y, sxx += x * x, sxy += x * y;
  double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
  if (!(slope > 0)) slope = 1e-12;
  const double latency = std::max(0.0, (sy - slope * sx) / n);
  return {ranks, latency, 1.0 / slope};
}

const std::vector<int64_t> kCollectiveBytes = {4 << 10, 64 << 10, 1 << 20, 4 << 20};
constexpr int kCollectiveRepeats = 9;

// One rank's part: every collective at every size; rank 0 keeps the times.
std::map<std::string, std::vector<std::pair<double, double>>> run_collectives(SpmdGroup& group) {
  std::map<std::string, std::vector<std::pair<double, double>>> out;
  for (int64_t bytes : kCollectiveBytes) {
    torch::Tensor t = torch::ones({bytes / 4});
    const torch::Tensor part = torch::ones({bytes / 4 / group.world()});
    auto timed = [&](const std::function<void()>& op) {
      std::vector<double> times;
      for (int i = 0; i < kCollectiveRepeats + 1; ++i) {
        group.barrier();
        const auto t0 = Clock::now();
        op();
        if (i > 0) times.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      }
      std::sort(times.begin(), times.end());
      return times[times.size() / 2];
    };
    out["all_reduce"].push_back({double(bytes), timed([&] { group.all_reduce_sum(t); })});
    // all_gather's S is the gathered result: world parts of bytes/world.
    out["all_gather"].push_back({double(bytes), timed([&] { group.all_gather(part); })});
    out["broadcast"].push_back({double(bytes), timed([&] { group.broadcast(t, 0); })});
  }
  return out;
}

constexpr std::chrono::milliseconds kCollectiveTimeout{300000};

// One group of `ranks` processes: this one is rank 0, the others are
// forked children that wait at the group's store until rank 0 serves it.
struct ProcessGroupRun {
  int ranks = 2, port = 0;
  std::vector<pid_t> children;
};

// Forks every group's children at once, before this process has started
// any thread (Gloo's, LibTorch's): a child forked later could inherit a
// lock that a thread of the parent held.
std::vector<ProcessGroupRun> fork_rank_processes(int max_ranks) {
  std::vector<ProcessGroupRun> groups;
  const std::vector<int> ports = free_loopback_ports(max_ranks - 1);
  for (int ranks = 2; ranks <= max_ranks; ++ranks) {
    ProcessGroupRun g{ranks, ports[ranks - 2], {}};
    for (int r = 1; r < ranks; ++r) {
      const pid_t pid = ::fork();
      if (pid < 0) throw std::runtime_error("calibration: fork failed for rank " + std::to_string(r));
      if (pid == 0) {
        int code = 0;
        try {
          SpmdGroup group({"127.0.0.1", g.port, r, ranks, kCollectiveTimeout, false});
          run_collectives(group);
        } catch (...) {
          code = 1;
        }
        ::_exit(code);
      }
      g.children.push_back(pid);
    }
    groups.push_back(g);
  }
  return groups;
}

// Rank 0's part in one group, then the children's exits.
std::map<std::string, std::vector<std::pair<double, double>>> measure_group(const ProcessGroupRun& g) {
  std::map<std::string, std::vector<std::pair<double, double>>> times;
  std::string failure;
  try {
    SpmdGroup group({"127.0.0.1", g.port, 0, g.ranks, kCollectiveTimeout, true});
    times = run_collectives(group);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  for (pid_t pid : g.children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) failure += " (a rank process failed)";
  }
  if (!failure.empty())
    throw std::runtime_error("calibration: the c10d Gloo collectives among " + std::to_string(g.ranks) +
                             " processes failed: " + failure);
  return times;
}

}  // namespace

core::planner::DeviceProfile calibrate_this_machine(const CalibrationOptions& options) {
  core::planner::DeviceProfile p;
  p.name = options.name;
  p.kind = "cpu";
  p.precision = "fp32";
  const int cores = usable_cores();
  // Before any thread starts: forks only.
  const double parallelism = measured_parallelism(std::max(cores, options.max_ranks));
  nlohmann::json measured = nlohmann::json::object();
  // Collectives first: the children are forked before this process starts
  // any compute thread.
  for (const ProcessGroupRun& g : fork_rank_processes(std::max(2, options.max_ranks))) {
    for (const auto& [kind, points] : measure_group(g)) {
      p.collectives[kind].push_back(fit(g.ranks, points));
      for (auto [bytes, seconds] : points)
        measured["collectives"][kind][std::to_string(g.ranks)].push_back({bytes, seconds});
    }
  }
  at::set_num_threads(1);
  torch::NoGradGuard no_grad;
  const auto& s = options.shape;
  const int64_t tokens = options.tokens;
  // Matmul at the model's shapes: the MLP's up projection and the attention's.
  const torch::Tensor x = torch::randn({tokens, s.hidden_size});
  const torch::Tensor w_up = torch::randn({s.intermediate_size, s.hidden_size});
  const torch::Tensor w_q = torch::randn({s.hidden_size, s.hidden_size});
  const double up_s = median_seconds(7, [&] { torch::matmul(x, w_up.t()); });
  const double q_s = median_seconds(7, [&] { torch::matmul(x, w_q.t()); });
  const double flops = 2.0 * tokens * s.hidden_size * (s.intermediate_size + s.hidden_size);
  p.peak_matmul_flops = flops / (up_s + q_s);
  p.matmul_efficiency = 1;
  // Attention: causal, over the model's heads and sequence.
  const int64_t batch = std::max<int64_t>(1, tokens / options.sequence);
  const torch::Tensor q = torch::randn({batch, s.num_heads, options.sequence, s.head_dim()});
  const double attention_s =
      median_seconds(7, [&] { at::scaled_dot_product_attention(q, q, q, {}, 0.0, /*is_causal=*/true); });
  const double attention_flops =
      4.0 * batch * s.num_heads * s.head_dim() * options.sequence * options.sequence / 2;
  p.attention_efficiency = std::min(1.0, attention_flops / attention_s / p.peak_matmul_flops);
  // Memory: a matrix-vector product over 64 MiB of weights.
  const torch::Tensor big = torch::randn({4096, 4096});
  const torch::Tensor v = torch::randn({1, 4096});
  const double mv_s = median_seconds(7, [&] { torch::matmul(v, big.t()); });
  p.memory_bandwidth = 4096.0 * 4096 * 4 / mv_s;
  p.memory_efficiency = 1;
  // Operator overhead: tiny operators one after another.
  torch::Tensor tiny = torch::randn({1, 8});
  const torch::Tensor tiny_w = torch::randn({8, 8});
  constexpr int kOps = 300;
  const double ops_s = median_seconds(5, [&] {
    torch::Tensor y = tiny;
    for (int i = 0; i < kOps / 3; ++i) y = torch::silu(torch::matmul(y, tiny_w)) + tiny;
  });
  p.op_overhead_s = ops_s / kOps;
  // A decode step of the model's shape for `batch` rows (weights only;
  // for the profile's record).
  std::vector<torch::Tensor> layer_weights;
  for (int64_t l = 0; l < s.num_layers; ++l) {
    layer_weights.push_back(torch::randn({s.hidden_size * 4, s.hidden_size}));
    layer_weights.push_back(torch::randn({s.intermediate_size * 3, s.hidden_size}));
  }
  const torch::Tensor row = torch::randn({batch, s.hidden_size});
  const double decode_s = median_seconds(7, [&] {
    for (const auto& w : layer_weights) torch::matmul(row, w.t());
  });
  // The workers' own Transformer at the model's shape: forward passes of
  // two micro-batch sizes give, by a line through (FLOPs, seconds), the
  // rate the model's matmuls reach and the fixed cost per layer that its
  // operators add; the planner's compute is then this model's, not a bare
  // matmul's (a tiny model's steps are mostly operator overhead).
  {
    model::TransformerConfig cfg;
    cfg.vocab_size = s.vocab_size;
    cfg.hidden_size = s.hidden_size;
    cfg.intermediate_size = s.intermediate_size;
    cfg.num_layers = s.num_layers;
    cfg.num_heads = s.num_heads;
    cfg.num_kv_heads = s.num_kv_heads;
    cfg.max_position_embeddings = std::max<int64_t>(options.sequence, 16);
    model::Transformer net(cfg);
    const int64_t big = std::max<int64_t>(2, tokens / options.sequence),
                  small = std::max<int64_t>(1, big / 16);
    auto forward_seconds = [&](int64_t rows) {
      const torch::Tensor ids = torch::randint(0, s.vocab_size, {rows, options.sequence});
      const torch::Tensor mask = torch::ones({rows, options.sequence}, torch::kLong);
      return median_seconds(7, [&] { net->forward(ids, mask); });
    };
    auto flops_of = [&](int64_t rows) {
      const double t = double(rows) * options.sequence;
      return t * (s.weight_flops_per_token() + s.attention_flops_per_token(options.sequence / 2.0));
    };
    const double t_big = forward_seconds(big), t_small = forward_seconds(small);
    const double seconds_per_flop = (t_big - t_small) / (flops_of(big) - flops_of(small));
    const double fixed = std::max(0.0, t_small - seconds_per_flop * flops_of(small));
    if (seconds_per_flop > 0) {
      p.matmul_efficiency = std::min(1.0, 1.0 / seconds_per_flop / p.peak_matmul_flops);
      p.attention_efficiency = std::min(p.attention_efficiency, p.matmul_efficiency);
    }
    // The stage model charges 16 operators a layer per forward pass.
    p.op_overhead_s = std::max(p.op_overhead_s, fixed / (16.0 * s.num_layers));
    measured["model_forward_seconds"] = {{"rows", {small, big}},
                                         {"sequence", options.sequence},
                                         {"seconds", {t_small, t_big}},
                                         {"fixed_seconds", fixed}};
  }
  measured["matmul_seconds"] = {{"tokens", tokens}, {"up", up_s}, {"q", q_s}};
  measured["attention_seconds"] = {
      {"batch", batch}, {"sequence", options.sequence}, {"seconds", attention_s}};
  measured["matvec_64mib_seconds"] = mv_s;
  measured["decode_step_weights_seconds"] = {{"batch", batch}, {"seconds", decode_s}};
  measured["cores"] = cores;
  measured["parallelism"] = parallelism;
  p.measured = measured;
  p.memory_bytes = host_memory_bytes() / cores;
  p.usable_memory_fraction = 0.8;
  p.devices_per_node = std::max(8, 4 * cores);  // the validator's CPU worker slots
  p.concurrent_devices = std::max(1, static_cast<int>(std::lround(parallelism)));
  // One host: the 2-rank all-reduce's fit is its link.
  const auto& pair = p.collectives.at("all_reduce").front();
  p.intra_node = {pair.bandwidth, pair.latency_s / 2};
  p.inter_node = p.intra_node;
  p.call_overhead_s = 1e-3;
  p.sources = {
      {"measured", "rlwb plan --calibrate on this host"},
      {"call_overhead_s", "assumed: an RPC round trip with a step's batch (bench/RESULTS.md, bench_rpc)"},
      {"inter_node", "not measured (one host): the intra-node figures"}};
  return p;
}

}  // namespace rlwb::workers::calibration
