// A run's profile as the tracking DB stores it (docs/profiler.md): what the
// controller saw of every dataflow node in every profiled step (dispatch,
// each rank's compute and reply, waiting for the slowest rank, collect, the
// step's critical path), and each worker's calling-context tree per step
// window. Rows of the `profiles` table, by kind:
//   "meta"  (step 0, node "")       the profile's settings and the run's layout
//   "step"  (step N, node "")       one StepTiming
//   "cct"   (first step of the window, node = worker id)   one WorkerWindow
// No LibTorch here.
#pragma once

#include "core/profile/context_tree.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core::profile {

inline constexpr int kProfileSchema = 1;

// A profile that cannot be read: not profiled, unknown run, bad window,
// another schema. what() says what to run instead.
class ProfileError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct RankTiming {
  int rank = 0;
  double compute_s = 0;  // the method's own time, as the worker measured it
  double reply_s = 0;    // from the node's start until this rank's reply was in
  int64_t rows = 0;      // rows this rank was given
};

struct NodeTiming {
  std::string node, call;
  std::string kind;                // "worker", "builtin" or "reward"
  std::string pool;                // worker nodes: the pool its model runs on
  double start = 0, end = 0;       // seconds since the run's first pass began
  double dispatch_s = 0;           // split, encode and send, on the controller
  double collect_s = 0;            // merging the ranks' replies
  std::vector<RankTiming> ranks;   // local nodes: one, with their compute_s
  std::vector<std::string> after;  // the nodes whose columns it read

  double wall() const { return end - start; }
  double slowest_compute() const;  // max over ranks
  double mean_compute() const;
  // Time between the first and the last rank's reply: the fast ranks wait.
  double rank_spread() const;
  // Wall time not spent computing on the slowest rank: dispatch, transfer
  // both ways, queueing, collect.
  double overhead() const { return std::max(0.0, wall() - slowest_compute()); }
};

struct StepTiming {
  int64_t step = 0;
  double seconds = 0;
  std::vector<NodeTiming> nodes;
  std::vector<std::string> critical_path;  // node ids, first to last
  const NodeTiming* find(const std::string& node) const;
};

// The chain of nodes that bounds the step: from the node that ended last,
// back through the dependency that ended last, to a node with none.
std::vector<std::string> critical_path(const std::vector<NodeTiming>& nodes);

struct WorkerWindow {
  std::string worker;  // "<pool>/<rank>"
  std::string host;
  int pid = 0;
  int64_t first_step = 0, last_step = 0;
  int intra_op_threads = 0;
  int64_t peak_bytes = 0;          // allocator's high-water mark seen while profiling
  int64_t rss_peak_bytes = 0;      // the process's resident-set high-water mark (VmHWM) so far
  int64_t memory_limit_bytes = 0;  // its CUDA device's memory, else the host's or its cgroup's
                                   // (the smaller); these two 0: unknown, and a note says why
  std::vector<std::string> notes;  // what could not be measured, and why
  ContextTree tree;
};

struct ProfileMeta {
  int schema = kProfileSchema;
  int64_t first_step = 1, last_step = 0;  // the profiled steps
  int64_t window = 0;                     // steps per stored tree
  bool shapes = true, native_stacks = false, trace = false;
  int host_cores = 0;
  // The steady (CLOCK_MONOTONIC) time, in microseconds, at which the step
  // timings' clock began: operator events (profile.trace), which carry that
  // clock's time, are placed on the steps' timeline with it. One host only.
  double clock_origin_us = 0;
  // {pool: {workers, device}}, {reward: {type, executors?}},
  // {model: {pool, role, dp, tp, pp, config, micro_batch_size?, mini_batch_size?}}: the last two
  // as the role reads them (defaults filled in), for the roles that have them; mini_batch_size is
  // ppo.mini_batch_size, global rows per optimizer step, 0 for the whole batch.
  nlohmann::json pools = nlohmann::json::object(), models = nlohmann::json::object(),
                 rewards = nlohmann::json::object();
};

// One operator call kept by profile.trace.
struct TraceEvent {
  std::string name;
  double start_us = 0, duration_us = 0;  // start on CLOCK_MONOTONIC
  int depth = 0;                         // 0: called by the method itself
};

// A worker's operator events for one window (rows of kind "trace").
struct WorkerTrace {
  std::string worker;
  int64_t first_step = 0, last_step = 0;
  std::vector<TraceEvent> events;
};

struct RunProfile {
  int64_t run = 0;
  ProfileMeta meta;
  std::vector<StepTiming> steps;
  std::vector<WorkerWindow> workers;
  std::vector<WorkerTrace> traces;  // with profile.trace only
  // Every window of every worker merged (the hot contexts of the run);
  // `worker` filters by worker id prefix ("" for all).
  ContextTree merged_tree(const std::string& worker = "") const;
};

nlohmann::json to_json(const RankTiming& r);
nlohmann::json to_json(const NodeTiming& n);
nlohmann::json to_json(const StepTiming& s);
nlohmann::json to_json(const WorkerWindow& w);
nlohmann::json to_json(const ProfileMeta& m);
// Throw ProfileError naming the field.
StepTiming step_timing_from_json(const nlohmann::json& j);
WorkerWindow worker_window_from_json(const nlohmann::json& j);
// A "trace" row's data; `worker` is the row's node.
WorkerTrace worker_trace_from_json(const std::string& worker, const nlohmann::json& j);
ProfileMeta profile_meta_from_json(const nlohmann::json& j);

}  // namespace rlwb::core::profile
