// bench_reshard: an actor's switch from training to generation and back
// (train -> generate -> train) on CPU worker processes, three ways, next to
// HybridFlow's table 2 (workers/hybrid_engine/hybrid_layout.h):
//   (a) DeepSpeed-Chat   each rank holds a ZeRO-3 partition (M/(tpd)) and
//                        all-gathers the whole model over all t p d ranks
//   (b) HybridFlow-V     each rank holds its training shard (M/(t p)) and
//                        gathers the whole model within its training TP
//                        (and PP) group, keeping the generation shard of it
//   (c) RLWB's engine    workers/hybrid_engine/hybrid_engine.h: one
//                        all-gather inside each micro-DP group, into the
//                        buffer that already holds the training shard
// All three gather with c10d Gloo (SpmdGroup::all_gather) in pieces of the
// same size, over the same processes. And the placement verl also runs:
//   (d) separate pool    the training TP ranks of the first replica stream
//                        the weights, after each update, to --gen-ranks
//                        processes of their own that hold the whole model
//                        (workers/hybrid_engine/weight_stream.h), in
//                        buckets of --bucket-mib over c10d broadcasts;
//                        once everything, once only the tensors an update
//                        touched (the embedding and LM head kept frozen)
// For each way, per rank:
//   bytes received   counted per collective, and measured: the loopback
//                    interface's received bytes during the switch
//                    (/proc/net/dev, the whole machine) / ranks
//   switch time      to_generation + to_training, slowest rank; rounds
//                    interleave the ways (order rotated each round) and
//                    the ratio (c)/(a) and (c)/(b) of every round is printed
//   memory           parameter bytes held while generating: the generation
//                    weights and what duplicates the training shard
//                    (accounted), and the total from the resident set
//                    (peak RSS during the switch - RSS before it + the
//                    training shard held all along)
// The model: a Llama-shaped Transformer of about 124M parameters (8
// layers, hidden 768, MLP 3072, vocabulary 32000), float32 on the CPU.
// With --pp the ranks also hold pipeline stages, each with its blocks and
// its share of the embedding's and the head's rows (split over the
// replica's p t ranks, model/pipeline_parallel.h), as table 2 assumes;
// only the final norm (a vector) is on every stage. Way (d) streams from
// tensor-parallel senders only and is left out at pp > 1.
// The processes inherit the CPU affinity of the command: pin the run with
// taskset to compare runs on the same cores.
//
// Usage: bench_reshard [--tp 4] [--dp 1] [--gen-tp 2] [--pp 1] [--gen-pp 1] [--layers 8] [--rounds 5]
//                      [--piece-kib 1024] [--gen-ranks 1] [--bucket-mib 32]
#include <ATen/Parallel.h>
#include <malloc.h>
#include <sched.h>
#include <sys/wait.h>
#include <torch/torch.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "bench/bench_record.h"
#include "core/common/command_line.h"
#include "workers/hybrid_engine/hybrid_engine.h"
#include "workers/hybrid_engine/weight_stream.h"
#include "workers/mesh_groups.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace {

using rlwb::workers::MeshGroups;
using rlwb::workers::SpmdGroup;
using namespace rlwb::workers::hybrid_engine;
using rlwb::workers::model::Transformer;
using rlwb::workers::model::TransformerConfig;
using Clock = std::chrono::steady_clock;

constexpr double kMiB = 1024.0 * 1024.0;

struct Settings {
  int tp = 4, dp = 1, gen_tp = 2, pp = 1, gen_pp = 1, layers = 8, rounds = 5, gen_ranks = 1;
  int64_t piece_kib = 1024, bucket_mib = 32;
  HybridLayout layout() const {
    return HybridLayout({.pp = pp, .tp = tp, .dp = dp}, {.pp = gen_pp, .tp = gen_tp});
  }
  // The separate pool of way (d): tensor-parallel senders only.
  int separate_ranks() const { return pp == 1 ? gen_ranks : 0; }
  std::string shape() const {
    const std::string training = (pp > 1 ? "p=" + std::to_string(pp) + " " : "") + "t=" + std::to_string(tp) +
                                 (dp > 1 ? " d=" + std::to_string(dp) : "");
    return training + " -> " + (pp > 1 ? "p_g=" + std::to_string(gen_pp) + " " : "") +
           "t_g=" + std::to_string(gen_tp);
  }
};

// [SECTION] what one process measures of itself

int64_t status_kib(const std::string& key) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key + ":", 0) == 0) return std::stoll(line.substr(key.size() + 1));
  return 0;
}
int64_t rss_bytes() { return status_kib("VmRSS") * 1024; }
int64_t peak_rss_bytes() { return status_kib("VmHWM") * 1024; }
void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Bytes received on the loopback interface, by every process of the
// machine (/proc/net/dev): the ranks' Gloo traffic, and whatever else runs.
int64_t loopback_bytes() {
  std::ifstream in("/proc/net/dev");
  std::string line;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    std::string name = line.substr(0, colon);
    name.erase(0, name.find_first_not_of(' '));
    if (name == "lo") return std::stoll(line.substr(colon + 1));
  }
  return 0;
}

// [SECTION] the three ways

// Gathers `mine` (flat) from every member of `group` in pieces; each piece
// of member k lands where `destination(k, start, length)` says. Returns
// the bytes received.
int64_t gather_in_pieces(SpmdGroup& group, const torch::Tensor& mine, int64_t piece,
                         const std::function<torch::Tensor(int, int64_t, int64_t)>& destination) {
  int64_t received = 0;
  for (int64_t start = 0; start < mine.numel(); start += piece) {
    const int64_t len = std::min(piece, mine.numel() - start);
    std::vector<torch::Tensor> parts = group.all_gather(mine.narrow(0, start, len));
    for (int k = 0; k < group.world(); ++k)
      if (k != group.rank()) destination(k, start, len).copy_(parts[k]);
    received += (group.world() - 1) * len * static_cast<int64_t>(sizeof(float));
  }
  return received;
}

class Way {
 public:
  virtual ~Way() = default;
  virtual const char* name() const = 0;
  virtual ReshardCost formula() const = 0;
  virtual void to_generation() = 0;
  virtual void to_training() = 0;
  virtual int64_t received() const = 0;
  // Parameter bytes held while generating: generation weights, and what
  // duplicates the training shard besides them.
  virtual int64_t generation_bytes() const = 0;
  virtual int64_t redundant_bytes() const = 0;
  // Held while training (all along): the training shard.
  virtual int64_t training_bytes() const = 0;
};

// The model's parameters flattened, [from, from + count) of them (zeros past the end).
torch::Tensor flat_range(Transformer& net, int64_t from, int64_t count) {
  torch::Tensor out = torch::zeros({count});
  int64_t at = 0;
  for (const auto& p : net->parameters()) {
    const int64_t n = p.numel(), lo = std::max(from, at), hi = std::min(from + count, at + n);
    if (lo < hi)
      out.narrow(0, lo - from, hi - lo).copy_(p.detach().reshape({-1}).narrow(0, lo - at, hi - lo));
    at += n;
  }
  return out;
}

// (a) and (b): the whole model gathered from every member's flat parts --
// a ZeRO-3 partition over the pool for DeepSpeed-Chat; for HybridFlow-V
// the training shard over the TP group, and with stages the blocks and
// the vocabulary's shares over the replica's TP x PP ranks and the final
// norm (on every stage) over the TP group only. Generation reads its shard of the whole; the own
// parts stay held beside it.
struct FlatPart {
  torch::Tensor mine;
  SpmdGroup* group = nullptr;  // null: held as it is, nothing to gather
};

class GatherWhole : public Way {
 public:
  GatherWhole(const char* name, ReshardCost formula, std::vector<FlatPart> parts, int64_t piece)
      : name_(name), formula_(formula), parts_(std::move(parts)), wholes_(parts_.size()), piece_(piece) {}
  const char* name() const override { return name_; }
  ReshardCost formula() const override { return formula_; }
  void to_generation() override {
    received_ = 0;
    for (size_t k = 0; k < parts_.size(); ++k) {
      const FlatPart& part = parts_[k];
      if (part.group == nullptr) continue;
      const int64_t n = part.mine.numel();
      torch::Tensor& whole = wholes_[k];
      whole = torch::empty({n * part.group->world()});
      whole.narrow(0, part.group->rank() * n, n).copy_(part.mine);
      received_ += gather_in_pieces(
          *part.group, part.mine, piece_,
          [&](int member, int64_t start, int64_t len) { return whole.narrow(0, member * n + start, len); });
    }
  }
  void to_training() override {
    for (torch::Tensor& whole : wholes_) whole = torch::Tensor();
  }
  int64_t received() const override { return received_; }
  int64_t generation_bytes() const override {
    int64_t bytes = 0;
    for (const FlatPart& part : parts_)
      bytes += part.mine.numel() * (part.group ? part.group->world() : 1) * 4;
    return bytes;
  }
  int64_t redundant_bytes() const override {
    int64_t bytes = 0;
    for (const FlatPart& part : parts_) bytes += part.group ? part.mine.numel() * 4 : 0;
    return bytes;
  }
  int64_t training_bytes() const override {
    int64_t bytes = 0;
    for (const FlatPart& part : parts_) bytes += part.mine.numel() * 4;
    return bytes;
  }

 private:
  const char* name_;
  ReshardCost formula_;
  std::vector<FlatPart> parts_;
  std::vector<torch::Tensor> wholes_;
  int64_t piece_, received_ = 0;
};

class Engine : public Way {
 public:
  Engine(Transformer shard, SpmdGroup& pool, const HybridLayout& layout, int64_t piece_bytes)
      : engine_(std::move(shard), pool, layout, "bench", HybridEngineOptions{piece_bytes}) {
    training_ = engine_.resident_parameter_bytes();
  }
  const char* name() const override { return "(c) RLWB engine"; }
  ReshardCost formula() const override { return hybrid_engine_cost(engine_.layout()); }
  void to_generation() override {
    engine_.to_generation();
    generating_ = engine_.resident_parameter_bytes();
  }
  void to_training() override { engine_.to_training(); }
  int64_t received() const override { return engine_.bytes_received(); }
  int64_t generation_bytes() const override { return generating_; }
  int64_t redundant_bytes() const override { return 0; }  // the shard is inside the generation buffers
  int64_t training_bytes() const override { return training_; }

 private:
  HybridEngine engine_;
  int64_t training_ = 0, generating_ = 0;
};

// (d): the weights streamed to a pool of their own after an update. The
// training ranks hold nothing for generation; each generation rank holds
// the whole model all along (on devices of its own).
struct Streamed {  // of one stream in one round, this rank
  double seconds = 0;
  rlwb::workers::hybrid_engine::StreamStats stats;
};

Streamed stream_once(rlwb::workers::hybrid_engine::WeightStreamer& streamer, SpmdGroup& group,
                     std::vector<torch::Tensor>& updated) {
  {
    // What an optimizer step does to the versions of the tensors it updates.
    torch::NoGradGuard no_grad;
    if (!streamer.generating_rank())
      for (torch::Tensor& t : updated) t.mul_(1.0);
  }
  group.barrier();
  Streamed s;
  const auto t0 = Clock::now();
  s.stats = streamer.stream();
  s.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  return s;
}

// [SECTION] one rank

struct Measured {  // of one way in one round, this rank
  double seconds = 0;
  int64_t loopback = 0, peak_total = 0;
};

Measured switch_once(Way& way, SpmdGroup& pool) {
  Measured m;
  pool.barrier();
  const int64_t rss_before = rss_bytes(), loopback_before = loopback_bytes();
  reset_peak_rss();
  const auto t0 = Clock::now();
  way.to_generation();
  const auto t1 = Clock::now();
  m.peak_total = peak_rss_bytes() - rss_before + way.training_bytes();
  pool.barrier();  // every rank has received all (a barrier adds a few bytes)
  m.loopback = loopback_bytes() - loopback_before;
  const auto t2 = Clock::now();
  way.to_training();
  const auto t3 = Clock::now();
  m.seconds = std::chrono::duration<double>((t1 - t0) + (t3 - t2)).count();
  return m;
}

double max_over_ranks(SpmdGroup& pool, double value) {
  torch::Tensor t = torch::tensor({value}, torch::kFloat64);
  pool.all_reduce_max(t);
  return t.item<double>();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

TransformerConfig model_config(int layers) {
  TransformerConfig c;
  c.vocab_size = 32000;
  c.hidden_size = 768;
  c.intermediate_size = 3072;
  c.num_layers = layers;
  c.num_heads = 12;
  c.num_kv_heads = 12;
  c.max_position_embeddings = 2048;
  return c;
}

// The separate pool's share of the run: streams in the rounds of the
// others, and its figures printed by rank 0. Every rank takes part in
// `all`'s barriers; the senders and the generation ranks in the streams.
struct SeparatePool {
  std::unique_ptr<SpmdGroup> group;  // training TP ranks of replica 0 + the generation ranks
  std::unique_ptr<rlwb::workers::hybrid_engine::WeightStreamer> full, changed;
  std::vector<torch::Tensor> updated;  // what an update touches: all but the embedding and head
  std::vector<Streamed> full_runs, changed_runs;
  int64_t all_bytes = 0, changed_bytes = 0;
};

void make_streamers(Transformer net, SeparatePool& separate, const Settings& s) {
  using rlwb::workers::hybrid_engine::WeightStreamer;
  const int64_t bucket = s.bucket_mib << 20;
  separate.full = std::make_unique<WeightStreamer>(
      net, *separate.group, s.tp, "full", rlwb::workers::hybrid_engine::WeightStreamOptions{bucket, false});
  separate.changed = std::make_unique<WeightStreamer>(
      net, *separate.group, s.tp, "changed", rlwb::workers::hybrid_engine::WeightStreamOptions{bucket, true});
  for (auto& p : net->named_parameters()) {
    const bool frozen = p.key() == "tok_embeddings.weight" || p.key() == "lm_head.weight";
    if (!frozen) separate.updated.push_back(p.value());
  }
}

// One round of (d): a full stream, then an only-changed one after an
// update that left the embedding and the head alone.
void stream_round(SpmdGroup& all, SeparatePool& separate, bool warm_up) {
  all.barrier();
  if (separate.group) {
    Streamed full = stream_once(*separate.full, *separate.group, separate.updated);
    Streamed changed = stream_once(*separate.changed, *separate.group, separate.updated);
    if (!warm_up) {
      separate.full_runs.push_back(full);
      separate.changed_runs.push_back(changed);
    }
  }
  all.barrier();
}

struct SeparateFigures {
  std::vector<double> full_seconds, changed_seconds;         // slowest rank, per round
  double received_full = 0, received_changed = 0, sent = 0;  // most of any rank
};

SeparateFigures separate_figures(SpmdGroup& all, SeparatePool& separate) {
  SeparateFigures f;
  const int rounds = static_cast<int>(separate.full_runs.size());
  torch::Tensor count = torch::tensor({static_cast<double>(rounds)}, torch::kFloat64);
  all.all_reduce_max(count);
  for (int r = 0; r < static_cast<int>(count.item<double>()); ++r) {
    const bool mine = r < rounds;
    f.full_seconds.push_back(max_over_ranks(all, mine ? separate.full_runs[r].seconds : 0));
    f.changed_seconds.push_back(max_over_ranks(all, mine ? separate.changed_runs[r].seconds : 0));
  }
  const bool any = rounds > 0;
  f.received_full = max_over_ranks(all, any ? separate.full_runs[0].stats.bytes_received : 0);
  f.received_changed = max_over_ranks(all, any ? separate.changed_runs[0].stats.bytes_received : 0);
  f.sent = max_over_ranks(all, any ? separate.full_runs[0].stats.bytes_sent : 0);
  return f;
}

// A generation rank of the separate pool: a whole model of its own,
// overwritten by every stream.
int generation_pool_main(SpmdGroup& all, SeparatePool& separate, const Settings& s) {
  torch::manual_seed(2);
  Transformer net(model_config(s.layers));
  make_streamers(net, separate, s);
  stream_round(all, separate, /*warm_up=*/true);
  for (int round = 0; round < s.rounds; ++round) stream_round(all, separate, /*warm_up=*/false);
  separate_figures(all, separate);
  return 0;
}

void print_separate_pool(const SeparateFigures& f, const Settings& s, double M, double engine_seconds) {
  // An update leaves the embedding and the LM head alone: those go once.
  const TransformerConfig c = model_config(s.layers);
  const double frozen = (c.tie_word_embeddings ? 1.0 : 2.0) * c.vocab_size * c.hidden_size * 4.0;
  std::printf(
      "\n(d) separate pool: %d generation process(es), each holding the whole model (M = %.1f MiB) all "
      "along; training ranks hold no generation weights; buckets of %lld MiB\n",
      s.gen_ranks, M / kMiB, static_cast<long long>(s.bucket_mib));
  std::printf("%-28s %14s %12s %14s %10s\n", "stream", "received/gen", "formula", "sent/train rk", "time ms");
  std::printf("%-28s %14.1f %12.1f %14.1f %10.1f\n", "everything", f.received_full / kMiB, M / kMiB,
              f.sent / kMiB, median(f.full_seconds) * 1e3);
  std::printf("%-28s %14.1f %12.1f %14s %10.1f\n", "only the tensors updated", f.received_changed / kMiB,
              (M - frozen) / kMiB, "", median(f.changed_seconds) * 1e3);
  std::printf("  per round, everything / (c) engine's switch median: ");
  std::vector<double> ratios;
  for (double t : f.full_seconds) {
    ratios.push_back(t / engine_seconds);
    std::printf(" %.2f", ratios.back());
  }
  std::printf("\n");
  const std::string shape = "t=" + std::to_string(s.tp) + (s.dp > 1 ? " d=" + std::to_string(s.dp) : "") +
                            " -> " + std::to_string(s.gen_ranks) + " generation process(es)";
  rlwb::bench::record_figure(
      {.key = "reshard/t=" + std::to_string(s.tp) + (s.dp > 1 ? " d=" + std::to_string(s.dp) : "") +
              "/separate_pool_stream",
       .title = "weights streamed after an update to a separate generation pool, " + shape + ", buckets of " +
                std::to_string(s.bucket_mib) + " MiB (`bench_reshard` (d)); received " +
                std::to_string(static_cast<int>(f.received_full / kMiB)) + " MiB = M per generation rank",
       .value = median(f.full_seconds) * 1e3,
       .unit = "ms",
       .peer = "(c) RLWB engine, colocated switch",
       .peer_value = engine_seconds * 1e3,
       .pair_ratios = ratios,
       .higher_is_better = false});
}

int rank_main(int rank, int port, const Settings& s) {
  at::set_num_threads(1);
  // Large tensors straight from mmap and back on free, so that the
  // resident set follows what is held.
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  const HybridLayout layout = s.layout();
  const int colocated = layout.world(), world = colocated + s.separate_ranks();
  SpmdGroup all(rlwb::workers::SpmdOptions{"127.0.0.1", port, rank, world, std::chrono::minutes(10)});
  std::vector<int> members;
  for (int r = 0; r < colocated; ++r) members.push_back(r);
  std::unique_ptr<SpmdGroup> colocated_group =
      rank < colocated ? all.subgroup("colocated", members) : nullptr;
  SeparatePool separate;
  members.clear();
  for (int r = 0; r < s.tp; ++r) members.push_back(r);
  for (int r = colocated; r < world; ++r) members.push_back(r);
  const bool streams = s.separate_ranks() > 0 && (rank < s.tp || rank >= colocated);
  if (streams) separate.group = all.subgroup("separate", members);
  if (rank >= colocated) return generation_pool_main(all, separate, s);
  SpmdGroup& pool = *colocated_group;
  const int64_t piece = s.piece_kib * 1024 / 4;
  std::shared_ptr<MeshGroups> groups =
      rlwb::workers::make_mesh_groups(pool, layout.training_mesh(), "bench", layout.generation_mesh());
  int64_t params = 0;
  std::unique_ptr<SpmdGroup> model_parallel;  // (b)'s group with stages
  std::vector<std::unique_ptr<Way>> ways;
  {
    torch::manual_seed(1);
    Transformer net(model_config(s.layers));
    for (const auto& p : net->parameters()) params += p.numel();
    const int64_t part = (params + pool.world() - 1) / pool.world();  // ZeRO-3: M/(tpd), padded
    ways.push_back(std::make_unique<GatherWhole>(
        "(a) DeepSpeed-Chat", deepspeed_chat_cost(layout),
        std::vector<FlatPart>{{flat_range(net, rank * part, part), &pool}}, piece));
    net->shard_tensor_parallel(groups->tensor_parallel(rank));
    net->shard_pipeline_parallel(groups->pipeline_parallel(rank));
    // HybridFlow-V gathers over the replica's model-parallel ranks: the TP
    // group, and with stages the blocks and the vocabulary's shares over
    // the TP x PP ranks (consecutive) and what every stage holds (the
    // final norm) over the TP group.
    std::vector<torch::Tensor> blocks, shared;
    for (const auto& p : net->named_parameters()) {
      const bool on_every_stage = rlwb::workers::model::layer_of_parameter(p.key()) < 0 &&
                                  !rlwb::workers::model::is_vocab_parameter(p.key());
      (s.pp > 1 && on_every_stage ? shared : blocks).push_back(p.value().detach().reshape({-1}));
    }
    std::vector<FlatPart> parts{{torch::cat(blocks), groups->tp.get()}};
    if (s.pp > 1) {
      std::vector<int> replica;
      const int first = rank / (s.tp * s.pp) * (s.tp * s.pp);
      for (int r = first; r < first + s.tp * s.pp; ++r) replica.push_back(r);
      model_parallel = pool.subgroup("model_parallel." + std::to_string(first), replica);
      parts = {{torch::cat(blocks), model_parallel.get()}, {torch::cat(shared), groups->tp.get()}};
    }
    ways.push_back(std::make_unique<GatherWhole>("(b) HybridFlow-V", hybridflow_v_cost(layout),
                                                 std::move(parts), piece));
    if (streams) make_streamers(net, separate, s);
    ways.push_back(std::make_unique<Engine>(net, pool, layout, s.piece_kib * 1024));
  }
  malloc_trim(0);
  for (auto& w : ways) switch_once(*w, pool);  // warm-up
  stream_round(all, separate, /*warm_up=*/true);
  const size_t n = ways.size();
  std::vector<std::vector<Measured>> runs(n);
  for (int round = 0; round < s.rounds; ++round) {
    for (size_t k = 0; k < n; ++k) {
      const size_t w = (round + k) % n;
      runs[w].push_back(switch_once(*ways[w], pool));
    }
    stream_round(all, separate, /*warm_up=*/false);
  }
  const SeparateFigures streamed = separate_figures(all, separate);
  // The slowest rank's time of every run, the largest figures of any rank.
  std::vector<std::vector<double>> seconds(n);
  for (size_t w = 0; w < n; ++w)
    for (const Measured& m : runs[w]) seconds[w].push_back(max_over_ranks(pool, m.seconds));
  std::vector<double> received(n), loopback(n), generation(n), redundant(n), total(n);
  for (size_t w = 0; w < n; ++w) {
    double most_total = 0;
    std::vector<double> per_rank;
    for (const Measured& m : runs[w]) {
      per_rank.push_back(static_cast<double>(m.loopback) / layout.world());
      most_total = std::max(most_total, static_cast<double>(m.peak_total));
    }
    received[w] = max_over_ranks(pool, ways[w]->received());
    loopback[w] = median(per_rank);  // rank 0's reading: the machine's
    generation[w] = max_over_ranks(pool, ways[w]->generation_bytes());
    redundant[w] = max_over_ranks(pool, ways[w]->redundant_bytes());
    total[w] = max_over_ranks(pool, most_total);
  }
  if (rank != 0) return 0;

  const double M = params * 4.0;
  std::printf("host: %s; %d ranks (processes) on CPUs %s; Gloo over loopback; 1 torch thread each\n",
              rlwb::bench::cpu_model().c_str(), layout.world(), rlwb::bench::allowed_cores().c_str());
  std::printf("model: %.1fM parameters, M = %.1f MiB float32; training %s (d_g=%d); pieces of %lld KiB\n",
              params / 1e6, M / kMiB, s.shape().c_str(), layout.micro_dp_size(),
              static_cast<long long>(s.piece_kib));
  std::printf(
      "per rank, MiB; formula = HybridFlow table 2 x M; time = train->generate->train, slowest "
      "rank, median of %d\n\n",
      s.rounds);
  std::printf("%-20s %10s %10s %10s | %10s %10s | %9s %9s | %10s %10s | %9s\n", "way", "received", "lo/ranks",
              "formula", "gen wts", "formula", "redund.", "formula", "total RSS", "formula", "time ms");
  for (size_t w = 0; w < n; ++w) {
    const ReshardCost f = ways[w]->formula();
    std::printf("%-20s %10.1f %10.1f %10.1f | %10.1f %10.1f | %9.1f %9.1f | %10.1f %10.1f | %9.1f\n",
                ways[w]->name(), received[w] / kMiB, loopback[w] / kMiB, f.bytes_moved * M / kMiB,
                generation[w] / kMiB, f.peak_memory * M / kMiB, redundant[w] / kMiB, f.redundancy * M / kMiB,
                total[w] / kMiB, (f.peak_memory + f.redundancy) * M / kMiB, median(seconds[w]) * 1e3);
  }
  std::printf("\nper-round time ratios (interleaved rounds, same processes and cores):\n");
  for (size_t against : {size_t{0}, size_t{1}}) {
    std::vector<double> ratios;
    std::printf("  (c)/%s:", against == 0 ? "(a)" : "(b)");
    for (size_t r = 0; r < seconds[2].size(); ++r) {
      ratios.push_back(seconds[2][r] / seconds[against][r]);
      std::printf(" %.3f", ratios.back());
    }
    const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
    std::printf("  median %.3f (spread %.3f-%.3f): time cut %.0f%%\n", median(ratios), *lo, *hi,
                (1 - median(ratios)) * 100);
    const std::string shape = s.shape();
    const std::string way = against == 0 ? "full_gather" : "hybridflow_v";
    // The engine's bytes and memory against table 2 ride along in the title.
    const ReshardCost f = ways[2]->formula();
    const double bytes_off = f.bytes_moved > 0 ? received[2] / (f.bytes_moved * M) - 1 : 0;
    const double memory_off = generation[2] / (f.peak_memory * M) - 1;
    char title[256];
    std::snprintf(title, sizeof title,
                  "weight resharding train->generate->train, %.1fM parameters, %s, vs %s "
                  "(`bench_reshard`); bytes %+.1f%%, memory %+.1f%% of table 2",
                  params / 1e6, shape.c_str(), ways[against]->name(), 100 * bytes_off, 100 * memory_off);
    rlwb::bench::record_figure(
        {.key = "reshard/" + shape + "/vs_" + way,
         .title = title,
         .value = median(seconds[2]) * 1e3,
         .unit = "ms",
         .peer = ways[against]->name(),
         .peer_value = median(seconds[against]) * 1e3,
         .pair_ratios = ratios,
         .higher_is_better = false,
         .goal = against == 0 ? "time cut >= 55% every round; bytes and memory within 5%" : "",
         .met = against == 0 ? std::optional<bool>(*hi <= 0.45 && std::abs(bytes_off) <= 0.05 &&
                                                   std::abs(memory_off) <= 0.05)
                             : std::nullopt});
  }
  if (s.separate_ranks() > 0) print_separate_pool(streamed, s, M, median(seconds[2]));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "bench_reshard: train->generate->train weight resharding, three ways, next to HybridFlow's table 2",
      "bench_reshard"};
  Settings s;
  app.add_option("--tp", s.tp, "training tensor parallelism")->check(CLI::PositiveNumber);
  app.add_option("--dp", s.dp, "training data parallelism")->check(CLI::PositiveNumber);
  app.add_option("--gen-tp", s.gen_tp, "generation tensor parallelism")->check(CLI::PositiveNumber);
  app.add_option("--pp", s.pp, "training pipeline stages")->check(CLI::PositiveNumber);
  app.add_option("--gen-pp", s.gen_pp, "generation pipeline stages")->check(CLI::PositiveNumber);
  app.add_option("--layers", s.layers, "transformer layers (8: 124M parameters)")->check(CLI::PositiveNumber);
  app.add_option("--rounds", s.rounds, "timed rounds of each way")->check(CLI::PositiveNumber);
  app.add_option("--piece-kib", s.piece_kib, "KiB of a rank's shard per all-gather")
      ->check(CLI::PositiveNumber);
  app.add_option("--gen-ranks", s.gen_ranks, "processes of the separate generation pool, way (d)")
      ->check(CLI::PositiveNumber);
  app.add_option("--bucket-mib", s.bucket_mib, "MiB per broadcast when streaming to the separate pool")
      ->check(CLI::PositiveNumber);
  if (auto exit_code = rlwb::core::parse_command_line(app, argc, argv)) return *exit_code;
  if (s.tp * s.pp < 2) {
    std::fprintf(
        stderr,
        "bench_reshard: --tp or --pp must be at least 2: with one model-parallel rank there is nothing "
        "to reshard\n");
    return rlwb::core::kUsageExitCode;
  }
  if (s.gen_pp < s.pp && (s.layers % s.pp != 0 || s.gen_tp != 1)) {
    std::fprintf(stderr,
                 "bench_reshard: with --gen-pp below --pp, --layers must divide by --pp and --gen-tp be 1 "
                 "(what the engine and the validator accept)\n");
    return rlwb::core::kUsageExitCode;
  }
  const HybridLayout layout = s.layout();  // checks it
  const int port = rlwb::workers::free_loopback_ports(1).front();
  std::vector<pid_t> children;
  std::fflush(nullptr);
  for (int rank = 0; rank < layout.world() + s.separate_ranks(); ++rank) {
    const pid_t pid = fork();
    if (pid == 0) {
      int code = 1;
      try {
        code = rank_main(rank, port, s);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_reshard: rank %d: %s\n", rank, e.what());
      }
      std::fflush(nullptr);
      _exit(code);
    }
    children.push_back(pid);
  }
  int failed = 0;
  for (pid_t pid : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    failed += !(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  return failed == 0 ? 0 : 1;
}
