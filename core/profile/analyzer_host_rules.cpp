// The analyzer's rules about the host (analyzer_rules.h): CPU threads
// oversubscribed. (A memory-headroom rule is not here: the profile has each
// worker's allocator peak but no limit to hold it against -- the device's or
// the host's free memory -- so a finding would have no sound basis.)
#include "core/profile/analyzer_rules.h"
#include "core/profile/profile_units.h"

#include <algorithm>
#include <map>

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

}  // namespace rlwb::core::profile
