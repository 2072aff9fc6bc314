// The analyzer's rules about the host (analyzer_rules.h): CPU threads
// oversubscribed; memory near its limit, or memory left unused while a
// model runs several micro-batches per optimizer step.
#include "core/profile/analyzer_rules.h"
#include "core/profile/profile_units.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>

namespace rlwb::core::profile {

namespace {

// The overrides that run `pool` on `workers` processes instead of `now`,
// with every model on it keeping its tp x pp and scaling its dp; "" when
// a model's layout does not fit the smaller pool.
std::string fewer_workers(const nlohmann::json& models, const std::string& pool, int now, int workers) {
  std::string overrides = "pools." + pool + ".workers=" + std::to_string(workers);
  for (const auto& [name, m] : models.items()) {
    if (m.value("pool", "") != pool) continue;
    const int inner = m.value("tp", 1) * m.value("pp", 1);
    if (inner <= 0 || workers % inner != 0) return "";
    const int dp = workers / inner;
    if (dp != m.value("dp", 1)) overrides += " models." + name + ".parallel.dp=" + std::to_string(dp);
  }
  (void)now;
  return overrides;
}

}  // namespace

void find_oversubscribed_threads(const AnalysisInput& in, std::vector<Finding>& out) {
  const int cores = in.profile.meta.host_cores;
  if (cores <= 0) return;
  // host -> worker -> its intra-op threads (the most any of its windows saw).
  std::map<std::string, std::map<std::string, int>> hosts;
  for (const WorkerWindow& w : in.profile.workers) {
    int& threads = hosts[w.host][w.worker];
    threads = std::max(threads, w.intra_op_threads);
  }
  for (const auto& [host, workers] : hosts) {
    int threads = 0;
    std::string per_worker;
    std::map<std::string, int> workers_per_pool;
    for (const auto& [worker, n] : workers) {
      threads += n;
      per_worker += (per_worker.empty() ? "" : ", ") + worker + ": " + std::to_string(n);
      workers_per_pool[worker.substr(0, worker.find('/'))] += 1;
    }
    if (threads <= cores) continue;
    const int fair_share = std::max(1, cores / static_cast<int>(workers.size()));
    // The worker nodes' compute on the critical path is what contends for
    // the cores: threads beyond them time-share, and their caches thrash.
    double critical_compute = 0;
    for (const NodeSummary& n : in.nodes)
      if (n.kind == "worker" && workers_per_pool.count(n.pool))
        critical_compute += n.slowest_compute_s * n.critical_share;
    const double lost_share = 1.0 - static_cast<double>(cores) / threads;
    Finding f;
    f.rule = "threads-oversubscribed";
    f.title = std::to_string(threads) + " intra-op threads on " + std::to_string(cores) + " cores of host " +
              (host.empty() ? "(unnamed)" : host);
    f.evidence = std::to_string(workers.size()) + " workers on the host run " + std::to_string(threads) +
                 " intra-op threads together (" + per_worker + ") on " + std::to_string(cores) +
                 " cores; their critical-path compute is " + format_seconds(critical_compute) + " per step";
    int most_threads = 0;
    for (const auto& [worker, n] : workers) most_threads = std::max(most_threads, n);
    std::vector<std::string> changes;
    if (most_threads > fair_share)
      changes.push_back("at most " + std::to_string(fair_share) +
                        " intra-op threads per worker (cores / workers on the host): the launcher sets each "
                        "worker's OMP_NUM_THREADS in core/controller/worker_cluster.cpp, and a role's "
                        "at::set_num_threads overrides it");
    for (const auto& [pool, count] : workers_per_pool)
      if (count > cores) {
        std::string fewer = fewer_workers(in.profile.meta.models, pool, count, cores);
        if (!fewer.empty()) changes.push_back("fewer workers: " + fewer);
      }
    if (changes.empty()) continue;  // nothing to change that the rule can name
    for (const auto& c : changes) f.change += (f.change.empty() ? "" : "; or ") + c;
    // Half of the share the extra threads take from each other comes back.
    f.gain_s = 0.5 * lost_share * critical_compute;
    out.push_back(std::move(f));
  }
}

// ---- memory-near-limit, memory-headroom -----------------------------------

namespace {

// Above 90% of the limit, one larger batch (a longer response, the
// allocator's fragmentation, another process) runs it out: the host swaps
// or the kernel kills a worker, a device raises out-of-memory.
constexpr double kNearLimitShare = 0.9;
// Below a quarter of the limit, micro-batches at least twice as large fit
// with room to spare, even if all of the peak grew with them.
constexpr double kUnusedShare = 0.25;
// A larger micro-batch is suggested only while its projected peak stays
// under half the limit: the projection is rough (below), and the other half
// is the margin for what it misses.
constexpr double kProjectedShare = 0.5;
// A run near its limit has lost nothing yet; what it risks is a step (or
// the run). The rule cannot weigh that chance, so it ranks the finding as a
// quarter of the step: above the tuning findings of a few percent, below a
// pool that idles for most of the step.
constexpr double kNearLimitStepShare = 0.25;
// An operator that does almost no work (a view, a reshape, an empty) costs
// its dispatch; the tenth percentile of the leaf operators' mean time per
// call, weighted by their calls, is such an operator's.
constexpr double kDispatchQuantile = 0.1;

// The memory a set of workers share, and what they used of it.
struct MemoryDomain {
  std::string name;   // "host a", "the CUDA device of worker main/0"
  std::string limit;  // what the limit is, for the evidence
  bool cuda = false;
  int64_t limit_bytes = 0, used_bytes = 0;
  int64_t peak_bytes = 0;  // the allocators' peaks in it: the part that grows with the micro-batch
  std::string per_worker;  // "main/0: 1.2 GiB, main/1: 1.1 GiB"
  std::set<std::string> pools;
  double used_share() const { return static_cast<double>(used_bytes) / static_cast<double>(limit_bytes); }
  // Every allocation scaled by `factor` (an over-estimate: weights and
  // optimizer states are in the allocator's peak too and do not grow), plus
  // the rest of the memory in use as it is.
  int64_t projected(int64_t factor) const { return used_bytes + (factor - 1) * peak_bytes; }
};

struct WorkerMemory {
  int64_t limit = 0, rss = 0, peak = 0;  // the most any of its windows saw
  std::string host, pool;
};

std::string pool_of(const std::string& worker) { return worker.substr(0, worker.find('/')); }

bool on_cuda(const RunProfile& profile, const std::string& pool) {
  return settings_of(profile.meta.pools, pool).value("device", std::string()).rfind("cuda", 0) == 0;
}

// On a CPU host, every worker's resident-set peak counts against the host's
// limit (a CUDA worker's host memory too); on CUDA, each device holds one
// worker's allocations, and a pool's fullest device speaks for the pool. A
// domain with any value unknown (0) is left out: no finding without both.
std::vector<MemoryDomain> memory_domains(const RunProfile& profile) {
  std::map<std::string, WorkerMemory> workers;
  for (const WorkerWindow& w : profile.workers) {
    WorkerMemory& m = workers[w.worker];
    m.limit = std::max(m.limit, w.memory_limit_bytes);
    m.rss = std::max(m.rss, w.rss_peak_bytes);
    m.peak = std::max(m.peak, w.peak_bytes);
    m.host = w.host;
    m.pool = pool_of(w.worker);
  }
  std::vector<MemoryDomain> domains;
  std::map<std::string, std::vector<std::pair<std::string, const WorkerMemory*>>> hosts;
  for (const auto& [worker, m] : workers) hosts[m.host].push_back({worker, &m});
  for (const auto& [host, members] : hosts) {
    MemoryDomain d;
    d.name = "host " + (host.empty() ? std::string("(unnamed)") : host);
    d.limit = "the host's memory or its cgroup limit, the smaller";
    bool known = true;
    for (const auto& [worker, m] : members) {
      known = known && m->rss > 0;
      d.used_bytes += m->rss;
      d.per_worker += (d.per_worker.empty() ? "" : ", ") + worker + ": " + format_bytes(m->rss);
      if (on_cuda(profile, m->pool)) continue;  // its allocator's peak is on the device
      known = known && m->limit > 0;
      d.limit_bytes = d.limit_bytes == 0 ? m->limit : std::min(d.limit_bytes, m->limit);
      d.peak_bytes += std::min(m->peak, m->rss);
      d.pools.insert(m->pool);
    }
    if (known && d.limit_bytes > 0 && !d.pools.empty()) domains.push_back(std::move(d));
  }
  std::map<std::string, MemoryDomain> devices;  // pool -> its fullest device
  for (const auto& [worker, m] : workers) {
    if (!on_cuda(profile, m.pool) || m.limit <= 0 || m.peak <= 0) continue;
    MemoryDomain d;
    d.name = "the CUDA device of worker " + worker;
    d.limit = "the device's memory";
    d.cuda = true;
    d.limit_bytes = m.limit;
    d.used_bytes = d.peak_bytes = m.peak;
    d.per_worker = worker + ": " + format_bytes(m.peak) + " (the allocator's peak)";
    d.pools = {m.pool};
    auto it = devices.find(m.pool);
    if (it == devices.end() || d.used_share() > it->second.used_share()) devices[m.pool] = std::move(d);
  }
  for (auto& [pool, d] : devices) domains.push_back(std::move(d));
  return domains;
}

// A model's batch settings as the meta carries them (0: unknown), and the
// rows each rank runs through one optimizer step.
struct ModelBatch {
  std::string model, pool;
  int64_t micro = 0;       // models.<m>.config.micro_batch_size
  int64_t local_rows = 0;  // ppo.mini_batch_size / dp, or the rows per rank of its calls; 0: unknown
  bool trains = false;     // it has an update (a PPO mini-batch): local_rows are per optimizer step
  std::vector<const NodeSummary*> nodes;  // its nodes that run micro-batches (all but generation)
};

ModelBatch batch_of(const AnalysisInput& in, const std::string& model) {
  const nlohmann::json& m = settings_of(in.profile.meta.models, model);
  ModelBatch b;
  b.model = model;
  b.pool = m.value("pool", std::string());
  b.micro = m.value("micro_batch_size", settings_of(m, "config").value("micro_batch_size", int64_t{0}));
  // Generation runs the whole batch at once; log-probs, values and updates
  // walk it in micro-batches.
  for (const NodeSummary& n : in.nodes)
    if (n.kind == "worker" && n.callee() == model && n.call.find(".generate") == std::string::npos)
      b.nodes.push_back(&n);
  int64_t rows = 0;  // the most rows one rank was given in one call
  for (const StepTiming& step : in.profile.steps)
    for (const NodeTiming& n : step.nodes)
      for (const NodeSummary* mine : b.nodes)
        if (n.node == mine->node)
          for (const RankTiming& r : n.ranks) rows = std::max(rows, r.rows);
  const int64_t mini = m.value("mini_batch_size", int64_t{0}), dp = std::max(1, m.value("dp", 1));
  b.trains = m.contains("mini_batch_size");
  if (mini > 0) {
    const int64_t local_mini = std::max<int64_t>(1, mini / dp);
    b.local_rows = rows > 0 ? std::min(local_mini, rows) : local_mini;
  } else {
    b.local_rows = rows;
  }
  return b;
}

// The dispatch cost of one operator call on `pool`'s workers (kDispatchQuantile), in ns; 0 without operators.
double dispatch_ns(const RunProfile& profile, const std::string& pool) {
  std::vector<std::pair<double, int64_t>> leaves;  // mean ns per call, calls
  int64_t calls = 0;
  filtered_tree(profile, pool).walk([&](const std::vector<const Frame*>& path) {
    const Frame& f = *path.back();
    if (f.kind != FrameKind::op || f.metrics.calls <= 0) return;
    for (const auto& c : f.children)
      if (c->kind == FrameKind::op) return;
    leaves.push_back(
        {static_cast<double>(f.metrics.wall_ns) / static_cast<double>(f.metrics.calls), f.metrics.calls});
    calls += f.metrics.calls;
  });
  std::sort(leaves.begin(), leaves.end());
  int64_t seen = 0;
  for (const auto& [ns, n] : leaves)
    if ((seen += n) >= kDispatchQuantile * static_cast<double>(calls)) return ns;
  return 0;
}

// Operator calls (nested ones too: each pays its dispatch) of node `n`'s method per step and rank.
double operator_calls_per_rank_step(const RunProfile& profile, const NodeSummary& n) {
  const ContextTree tree = filtered_tree(profile, n.pool);
  const Frame* node = tree.root().find(FrameKind::node, n.node);
  const Frame* method = node ? node->find(FrameKind::method, n.call.substr(n.call.find('.') + 1)) : nullptr;
  const int64_t steps = profiled_step_count(profile);
  if (!method || steps == 0 || n.ranks == 0) return 0;
  int64_t calls = 0;
  std::function<void(const Frame&)> count = [&](const Frame& f) {
    for (const auto& c : f.children)
      if (c->kind == FrameKind::op || c->kind == FrameKind::native) {
        if (c->kind == FrameKind::op) calls += c->metrics.calls;
        count(*c);
      }
  };
  count(*method);
  return static_cast<double>(calls) / static_cast<double>(steps * n.ranks);
}

// The override that sets `model`'s micro_batch_size; "++" where its config
// does not write one (it runs on the default), which a plain override rejects.
std::string micro_batch_override(const AnalysisInput& in, const std::string& model, int64_t rows) {
  const bool written =
      settings_of(settings_of(in.profile.meta.models, model), "config").contains("micro_batch_size");
  return std::string(written ? "" : "++") + "models." + model +
         ".config.micro_batch_size=" + std::to_string(rows);
}

std::string fixed(double value, const char* format) {
  char text[32];
  std::snprintf(text, sizeof text, format, value);
  return text;
}

std::string usage(const MemoryDomain& d) {
  return format_bytes(d.used_bytes) + " of " + format_bytes(d.limit_bytes) + " (" +
         format_percent(d.used_share()) + "; " + d.limit + ")";
}

void near_limit(const AnalysisInput& in, const MemoryDomain& d, std::vector<Finding>& out) {
  Finding f;
  f.rule = "memory-near-limit";
  f.title = d.name + " uses " + format_percent(d.used_share()) + " of its memory";
  f.evidence = std::string(d.cuda ? "the allocator's peak on " : "the workers' resident-set peaks on ") +
               d.name + " add up to " + usage(d) + ": " + d.per_worker;
  std::vector<std::string> overrides;
  for (const std::string& pool : d.pools)
    for (const std::string& model : in.models_on(pool)) {
      const ModelBatch b = batch_of(in, model);
      const int64_t now = b.local_rows > 0 ? std::min(b.micro, b.local_rows) : b.micro;
      if (now >= 2 && !b.nodes.empty()) overrides.push_back(micro_batch_override(in, model, now / 2));
    }
  const std::string elsewhere =
      "fewer workers on " + d.name + ", or a model on a pool elsewhere (models.<m>.pool)";
  for (const std::string& o : overrides) f.change += (f.change.empty() ? "" : " ") + o;
  f.change = overrides.empty()
                 ? "no model on its pools has a micro-batch left to halve: " + elsewhere
                 : f.change +
                       "\n(half the rows per forward/backward pass, and their activations; if it still runs "
                       "out: " +
                       elsewhere + ")";
  // Not a saving but a risk, ranked at a fixed share of the step (kNearLimitStepShare).
  f.gain_s = kNearLimitStepShare * in.step_s;
  f.evidence += "\nthe expected gain is the share of the step at risk (" +
                format_percent(kNearLimitStepShare) +
                ", a ranking, not a measurement): running out loses the step, or the run";
  out.push_back(std::move(f));
}

void unused_headroom(const AnalysisInput& in, const MemoryDomain& d, std::vector<Finding>& out) {
  std::vector<std::string> overrides, why;
  double gain = 0;
  int64_t largest = 1;
  for (const std::string& pool : d.pools) {
    const double op_ns = dispatch_ns(in.profile, pool);
    for (const std::string& model : in.models_on(pool)) {
      const ModelBatch b = batch_of(in, model);
      if (b.micro <= 0 || b.local_rows <= b.micro || b.nodes.empty()) continue;
      int64_t factor = 1;
      while (b.micro * factor * 2 <= b.local_rows &&
             d.projected(factor * 2) < kProjectedShare * static_cast<double>(d.limit_bytes))
        factor *= 2;
      if (factor == 1) continue;
      largest = std::max(largest, factor);
      // Each micro-batch runs the model's operators once more: with `factor`
      // times larger ones, 1 - 1/factor of those calls, and their dispatch,
      // go (the optimizer's own operators, once per step, are counted too:
      // a small over-estimate). Kernels that run more rows at once also get
      // faster; that is not counted.
      double calls = 0, saved = 0;
      for (const NodeSummary* n : b.nodes) {
        const double c = operator_calls_per_rank_step(in.profile, *n);
        calls += c;
        saved += c * op_ns * 1e-9 * (1.0 - 1.0 / static_cast<double>(factor)) * n->critical_share;
      }
      gain += saved;
      overrides.push_back(micro_batch_override(in, model, b.micro * factor));
      why.push_back(model + ": micro_batch_size " + std::to_string(b.micro) + " runs " +
                    std::to_string((b.local_rows + b.micro - 1) / b.micro) + " micro-batches per " +
                    (b.trains ? "optimizer step (" : "call (") + std::to_string(b.local_rows) +
                    " rows per rank), " + fixed(calls, "%.0f") +
                    " operator calls per step and rank at about " + format_seconds(op_ns * 1e-9) +
                    " dispatch each");
    }
  }
  if (overrides.empty()) return;
  Finding f;
  f.rule = "memory-headroom";
  f.title = d.name + " uses " + format_percent(d.used_share()) + " of its memory: larger micro-batches fit";
  f.evidence = std::string(d.cuda ? "the allocator's peak on " : "the workers' resident-set peaks on ") +
               d.name + " add up to " + usage(d) + ": " + d.per_worker;
  for (const std::string& w : why) f.evidence += ";\n" + w;
  for (const std::string& o : overrides) f.change += (f.change.empty() ? "" : " ") + o;
  f.change += "\n(fewer, larger micro-batches; at " + std::to_string(largest) +
              "x the allocations the peak would be about " + format_bytes(d.projected(largest)) + ", " +
              format_percent(static_cast<double>(d.projected(largest)) / static_cast<double>(d.limit_bytes)) +
              " of the limit)";
  f.gain_s = gain;
  out.push_back(std::move(f));
}

}  // namespace

void find_memory_headroom(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const MemoryDomain& d : memory_domains(in.profile)) {
    if (d.used_share() > kNearLimitShare)
      near_limit(in, d, out);
    else if (d.used_share() < kUnusedShare)
      unused_headroom(in, d, out);
  }
}

}  // namespace rlwb::core::profile
