// The analyzer's rules that read the controller's StepTimings
// (analyzer_rules.h): idle pools, straggler ranks, rewards on the critical
// path, transfer overhead, dispatch overhead.
#include "core/profile/analyzer_rules.h"
#include "core/profile/intervals.h"
#include "core/profile/context_paths.h"
#include "core/profile/profile_units.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <utility>

namespace rlwb::core::profile {

namespace {

double overlap(const Interval& span, const std::vector<Interval>& busy) {
  double covered = 0;
  for (const Interval& b : busy)
    covered += std::max(0.0, std::min(span.second, b.second) - std::max(span.first, b.first));
  return covered;
}

bool on_critical_path(const StepTiming& step, const std::string& node) {
  return std::find(step.critical_path.begin(), step.critical_path.end(), node) != step.critical_path.end();
}

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const std::string& item : items) text += (text.empty() ? "" : separator) + item;
  return text;
}

std::string share_of_step(double seconds, double step_s) {
  return format_seconds(seconds) + " per step (" + format_percent(step_s > 0 ? seconds / step_s : 0) +
         " of the " + format_seconds(step_s) + " step)";
}

// ---- pool-idle ------------------------------------------------------------

// A quarter of the step: below that, giving one pool's workers to another
// rarely pays for colocating their models.
constexpr double kIdleShareOfStep = 0.25;

struct PoolTime {
  double busy = 0;                           // union of its nodes' wall time, per step
  std::map<std::string, double> idle_while;  // other pool -> idle during that pool's critical nodes
  std::map<std::string, double> critical;    // this pool's critical-path wall time
  std::set<std::string> critical_nodes;
};

}  // namespace

void find_idle_pools(const AnalysisInput& in, std::vector<Finding>& out) {
  const double steps = static_cast<double>(in.profile.steps.size());
  if (steps == 0) return;
  std::map<std::string, PoolTime> pools;
  for (const StepTiming& step : in.profile.steps) {
    std::map<std::string, std::vector<Interval>> busy;
    for (const NodeTiming& n : step.nodes)
      if (n.kind == "worker" && !n.pool.empty()) busy[n.pool].push_back({n.start, n.end});
    for (auto& [pool, intervals] : busy) {
      intervals = merged_intervals(intervals);
      for (const Interval& i : intervals) pools[pool].busy += (i.second - i.first) / steps;
    }
    for (const NodeTiming& n : step.nodes) {
      if (n.kind != "worker" || n.pool.empty() || !on_critical_path(step, n.node)) continue;
      pools[n.pool].critical[n.pool] += n.wall() / steps;
      pools[n.pool].critical_nodes.insert(n.node);
      for (auto& [other, intervals] : busy)
        if (other != n.pool)
          pools[other].idle_while[n.pool] += (n.wall() - overlap({n.start, n.end}, intervals)) / steps;
    }
  }
  for (auto& [idle_pool, time] : pools) {
    // The pool whose critical-path work this one waits through the longest.
    auto worst = std::max_element(time.idle_while.begin(), time.idle_while.end(),
                                  [](auto& a, auto& b) { return a.second < b.second; });
    if (worst == time.idle_while.end() || worst->second < kIdleShareOfStep * in.step_s) continue;
    const std::string& busy_pool = worst->first;
    const int idle_workers = in.pool_workers(idle_pool), busy_workers = in.pool_workers(busy_pool);
    const int all_workers = idle_workers + busy_workers;
    const PoolTime& busy_time = pools[busy_pool];
    Finding f;
    f.rule = "pool-idle";
    f.title = "pool '" + idle_pool + "' idles while pool '" + busy_pool + "' works on the critical path";
    f.evidence =
        "pool '" + idle_pool + "' (" + std::to_string(idle_workers) + " workers) is idle " +
        share_of_step(worst->second, in.step_s) + " while pool '" + busy_pool + "' (" +
        std::to_string(busy_workers) + " workers) runs critical-path nodes " +
        joined(std::vector<std::string>(busy_time.critical_nodes.begin(), busy_time.critical_nodes.end()),
               ", ") +
        " (" + format_seconds(busy_time.critical.count(busy_pool) ? busy_time.critical.at(busy_pool) : 0) +
        " per step);\npool '" + idle_pool + "' is busy " + format_seconds(time.busy) + " per step";
    // Colocate: the idle pool's models move onto the busy pool's workers,
    // with data parallelism over all of them, and the idle pool goes. Its
    // workers could join too, but whether the batch divides over more dp
    // ranks the profile cannot tell: the change must validate as written.
    std::vector<std::string> overrides;
    bool fits = true;
    for (const std::string& model : in.models_on(idle_pool)) {
      const nlohmann::json& m = settings_of(in.profile.meta.models, model);
      const int inner = m.value("tp", 1) * m.value("pp", 1);
      if (inner <= 0 || busy_workers % inner != 0) fits = false;
      overrides.push_back("models." + model + ".pool=" + busy_pool);
      if (fits && busy_workers / inner != m.value("dp", 1))
        overrides.push_back("models." + model + ".parallel.dp=" + std::to_string(busy_workers / inner));
    }
    if (!fits || overrides.empty()) continue;
    overrides.push_back("~pools." + idle_pool);
    f.change = joined(overrides, " ") + "\n(colocate pool '" + idle_pool + "''s models on pool '" +
               busy_pool + "''s workers and remove pool '" + idle_pool + "'; its " +
               std::to_string(idle_workers) + " workers may then join pool '" + busy_pool + "' (pools." +
               busy_pool + ".workers=" + std::to_string(all_workers) +
               ", the models' dp to match) if the batch divides by " + std::to_string(all_workers) + ")";
    // With all workers on one pool, the critical work spreads over them and
    // the idle pool's own work, which overlapped it, runs between: what is
    // saved is the idle time's share of the workers that join.
    f.gain_s = all_workers > 0 ? worst->second * idle_workers / all_workers : 0;
    out.push_back(std::move(f));
  }
}

// ---- straggler-rank -------------------------------------------------------

namespace {

// Ranks of one node do the same work on equal shares; run-to-run noise
// between them stays well under 20%.
constexpr double kStragglerRatio = 1.2;
// Slowest in at least 3 steps of 4: one slow step is noise, not a straggler.
constexpr double kConsistentShare = 0.75;
// Below a millisecond a gap is timer noise against the node's wall time.
constexpr double kMinGapSeconds = 1e-3;

struct RankTotals {
  double compute = 0;
  int64_t rows = 0;
  int steps = 0, slowest = 0;
};

std::string host_of(const RunProfile& profile, const std::string& worker) {
  for (const WorkerWindow& w : profile.workers)
    if (w.worker == worker && !w.host.empty()) return w.host;
  return "";
}

}  // namespace

void find_straggler_ranks(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const NodeSummary& summary : in.nodes) {
    if (summary.ranks < 2) continue;
    std::map<int, RankTotals> ranks;
    int steps = 0;
    for (const StepTiming& step : in.profile.steps) {
      const NodeTiming* n = step.find(summary.node);
      if (!n || n->ranks.size() < 2) continue;
      ++steps;
      const RankTiming* slowest = &n->ranks.front();
      for (const RankTiming& r : n->ranks) {
        RankTotals& t = ranks[r.rank];
        t.compute += r.compute_s;
        t.rows += r.rows;
        t.steps += 1;
        if (r.compute_s > slowest->compute_s) slowest = &r;
      }
      ranks[slowest->rank].slowest += 1;
    }
    if (steps == 0) continue;
    double mean_all = 0;
    int worst_rank = -1;
    double worst_mean = -1;
    for (auto& [rank, t] : ranks) {
      const double mean = t.compute / t.steps;
      mean_all += mean / static_cast<double>(ranks.size());
      if (mean > worst_mean) worst_mean = mean, worst_rank = rank;
    }
    const double others_mean = (mean_all * ranks.size() - worst_mean) / static_cast<double>(ranks.size() - 1);
    const RankTotals& worst = ranks[worst_rank];
    if (worst_mean < kStragglerRatio * others_mean || worst_mean - others_mean < kMinGapSeconds ||
        worst.slowest < kConsistentShare * steps)
      continue;
    int64_t fewest_rows = worst.rows, most_rows = worst.rows;
    for (auto& [rank, t] : ranks)
      fewest_rows = std::min(fewest_rows, t.rows), most_rows = std::max(most_rows, t.rows);
    const bool uneven_rows = most_rows > fewest_rows;
    Finding f;
    f.rule = "straggler-rank";
    f.title = "rank " + std::to_string(worst_rank) + " of node '" + summary.node + "' is a straggler";
    f.evidence = "rank " + std::to_string(worst_rank) + " is the slowest in " +
                 std::to_string(worst.slowest) + " of " + std::to_string(steps) +
                 " steps: " + format_seconds(worst_mean) + " compute per step against " +
                 format_seconds(others_mean) + " on the other ranks; per rank:";
    for (auto& [rank, t] : ranks) {
      f.evidence +=
          "\n  rank " + std::to_string(rank) + ": " + format_seconds(t.compute / t.steps) + " compute";
      if (uneven_rows) f.evidence += ", " + std::to_string(t.rows / t.steps) + " rows";
    }
    const std::string model = "models." + summary.callee();
    if (uneven_rows) {
      f.change = "even out the rows the ranks of '" + summary.node +
                 "' get: make the rows of a call a multiple of " + model + ".parallel.dp (" +
                 std::to_string(ranks.size()) +
                 ") through task.batch_size (the split: core/rpc/dispatch.h split_dp)";
    } else {
      const std::string worker = summary.pool + "/" + std::to_string(worst_rank);
      const std::string host = host_of(in.profile, worker);
      f.change = "rank " + std::to_string(worst_rank) +
                 " gets the same rows and computes longer: look at worker " + worker +
                 (host.empty() ? "" : " on " + host) +
                 " (another load on its cores, a slower device); or run fewer ranks: " + model +
                 ".parallel.dp=" + std::to_string(ranks.size() - 1) + " pools." + summary.pool +
                 ".workers=" + std::to_string(ranks.size() - 1);
    }
    // Balanced, every rank would take the mean: the node ends that much sooner
    // in the steps where it bounds the step.
    f.gain_s = (worst_mean - mean_all) * summary.critical_share;
    out.push_back(std::move(f));
  }
}

// ---- reward-critical ------------------------------------------------------

namespace {

// A reward node bounding more than 15% of the step is worth parallelising:
// the math checker's share on the default run is a few percent.
constexpr double kRewardShareOfStep = 0.15;
// On the critical path in at least half the steps: otherwise shortening it
// moves the bound elsewhere.
constexpr double kRewardCriticalShare = 0.5;

// The worker node that most often comes right after `node` on the critical
// path and waits for it directly (`node` is in its `after`): a reference or
// critic pass that could run beside it. "" when there is none.
std::string waiting_worker_node(const RunProfile& profile, const std::string& node) {
  std::map<std::string, int> counts;
  for (const StepTiming& step : profile.steps) {
    auto at = std::find(step.critical_path.begin(), step.critical_path.end(), node);
    if (at == step.critical_path.end() || at + 1 == step.critical_path.end()) continue;
    const NodeTiming* next = step.find(*(at + 1));
    if (next && next->kind == "worker" &&
        std::find(next->after.begin(), next->after.end(), node) != next->after.end())
      counts[next->node] += 1;
  }
  auto best =
      std::max_element(counts.begin(), counts.end(), [](auto& a, auto& b) { return a.second < b.second; });
  return best == counts.end() ? "" : best->first;
}

}  // namespace

void find_critical_rewards(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const NodeSummary& reward : in.nodes) {
    if (reward.kind != "reward" || reward.critical_share < kRewardCriticalShare ||
        reward.critical_wall_s < kRewardShareOfStep * in.step_s)
      continue;
    const std::string name = reward.callee();
    const nlohmann::json& settings = settings_of(in.profile.meta.rewards, name);
    const int executors = settings.value("executors", 0);
    Finding f;
    f.rule = "reward-critical";
    f.title = "reward node '" + reward.node + "' bounds " +
              format_percent(reward.critical_wall_s / in.step_s) + " of the step";
    f.evidence = "'" + reward.node + "' (" + reward.call + ") is on the critical path in " +
                 format_percent(reward.critical_share) + " of the steps, " +
                 share_of_step(reward.critical_wall_s, in.step_s) + " there; mean wall " +
                 format_seconds(reward.wall_s);
    // More executors than cores only time-share them: the checks are CPU-bound.
    if (executors > 0 && executors < in.profile.meta.host_cores) {
      f.evidence += ", on " + std::to_string(executors) + " executors";
      // ++: the key is usually absent (one executor per core by default).
      f.change = "++rewards." + name + ".config.executors=" + std::to_string(2 * executors);
      f.gain_s =
          0.5 * reward.critical_wall_s;  // rows are judged in parallel: twice the executors, half the time
    } else {
      const std::string next = waiting_worker_node(in.profile, reward.node);
      if (next.empty()) continue;  // the reward bounds the step, but nothing waits on it that need not
      const NodeSummary& after = *std::find_if(in.nodes.begin(), in.nodes.end(),
                                               [&](const NodeSummary& n) { return n.node == next; });
      f.evidence += "; worker node '" + next + "' (" + format_seconds(after.wall_s) +
                    ") starts only when it ends, on the critical path";
      f.change =
          "overlap '" + reward.node + "' with '" + next + "': if '" + next +
          "' (e.g. the reference pass) needs none of the reward's columns, bind only the columns it reads "
          "in its in: list in the graph file, so that it starts beside '" +
          reward.node + "'";
      // Overlapped, the shorter of the two leaves the critical path.
      f.gain_s = std::min(reward.wall_s, after.wall_s) * reward.critical_share;
    }
    out.push_back(std::move(f));
  }
}

// ---- transfer-overhead ----------------------------------------------------

namespace {

// A quarter of a worker node's wall time spent neither computing nor
// dispatching/collecting: the data's way there and back dominates.
constexpr double kTransferShareOfNode = 0.25;
constexpr double kMinTransferSeconds = 2e-3;  // below it, the ZeroMQ round trip itself

}  // namespace

void find_transfer_overhead(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const NodeSummary& n : in.nodes) {
    if (n.kind != "worker" || n.wall_s <= 0 || n.transfer_s < kTransferShareOfNode * n.wall_s ||
        n.transfer_s < kMinTransferSeconds)
      continue;
    Finding f;
    f.rule = "transfer-overhead";
    f.title = "node '" + n.node + "' spends " + format_percent(n.transfer_s / n.wall_s) +
              " of its time moving data";
    f.evidence = "mean per step: wall " + format_seconds(n.wall_s) + ", slowest rank's compute " +
                 format_seconds(n.slowest_compute_s) + ", dispatch " + format_seconds(n.dispatch_s) +
                 ", collect " + format_seconds(n.collect_s) +
                 ", waiting for other nodes' calls on its workers " + format_seconds(n.queued_s) +
                 " -> transfer " + format_seconds(n.transfer_s) + "; on the critical path in " +
                 format_percent(n.critical_share) + " of the steps";
    f.change = "send '" + n.node +
               "' only the columns it reads (its in: list in the graph file); keep the ipc "
               "transport (not --transport tcp), where tensors from 1 MiB travel through shared memory "
               "(shm_threshold_bytes, core/wire/wire.h)";
    f.gain_s = 0.5 * n.transfer_s * n.critical_share;  // half: the copies go, the messages stay
    out.push_back(std::move(f));
  }
}

// ---- dispatch-overhead ----------------------------------------------------

namespace {

// Splitting and encoding a call costing a quarter of the compute it starts:
// the calls are too small for their fixed cost.
constexpr double kDispatchToCompute = 0.25;
constexpr double kMinDispatchSeconds = 1e-3;

// The method's calls per step and rank, from the workers' trees (0 if absent).
double method_calls_per_rank_step(const AnalysisInput& in, const NodeSummary& n) {
  const std::string method = n.call.substr(n.call.find('.') + 1);
  const ContextTree tree = filtered_tree(in.profile, n.pool);
  const Frame* node = tree.root().find(FrameKind::node, n.node);
  const Frame* frame = node ? node->find(FrameKind::method, method) : nullptr;
  const int64_t steps = profiled_step_count(in.profile);
  if (!frame || steps == 0 || n.ranks == 0) return 0;
  return static_cast<double>(frame->metrics.calls) / static_cast<double>(steps * n.ranks);
}

}  // namespace

void find_dispatch_overhead(const AnalysisInput& in, std::vector<Finding>& out) {
  for (const NodeSummary& n : in.nodes) {
    if (n.kind != "worker" || n.dispatch_s < kMinDispatchSeconds ||
        n.dispatch_s < kDispatchToCompute * n.mean_compute_s)
      continue;
    const std::string model = n.callee();
    const int micro_batch =
        settings_of(settings_of(in.profile.meta.models, model), "config").value("micro_batch_size", 0);
    const double calls = method_calls_per_rank_step(in, n);
    Finding f;
    f.rule = "dispatch-overhead";
    f.title = "dispatching node '" + n.node + "' costs " +
              format_percent(n.dispatch_s / std::max(n.mean_compute_s, 1e-12)) + " of its compute";
    f.evidence = "mean per step: dispatch (split, encode, send) " + format_seconds(n.dispatch_s) +
                 " against a mean compute of " + format_seconds(n.mean_compute_s) + " per rank";
    if (calls > 0) {
      char text[32];
      std::snprintf(text, sizeof text, "%.1f", calls);
      f.evidence += std::string("; the method runs ") + text + " times per step and rank";
    }
    f.change = micro_batch > 0
                   ? "models." + model + ".config.micro_batch_size=" + std::to_string(2 * micro_batch) +
                         " (fewer, larger calls)"
                   : "fewer, larger calls to '" + n.call +
                         "': more rows per call (task.batch_size) or "
                         "merge '" +
                         n.node + "' with the node it feeds; the dispatch cost is per call";
    f.gain_s = 0.5 * n.dispatch_s * n.critical_share;  // twice the rows per call: half the calls' fixed cost
    out.push_back(std::move(f));
  }
}

}  // namespace rlwb::core::profile
