// One pass of a dataflow graph over a Batch: every node whose input
// columns exist starts at once -- so independent nodes on different pools
// run at the same time -- and each node's output columns join the batch as
// it finishes. A node's columns are renamed to its callee's ports before
// the call and its output ports back to columns after it
// (core/controller/node_ports.h). Worker nodes are RPCs to a model's WorkerGroup (their
// replies complete them: no thread waits per node); builtin and reward
// nodes run in this process, on a thread each -- but a builtin with no
// other local node beside it runs on the runner's own thread (worker calls
// may be in flight). A worker node that waits only for the columns of a
// worker node on the same processes is sent right behind it and takes
// those columns on the workers (followers, WorkerGroup::call_after). The
// runner wakes only when a node finishes or a stop is requested.
#pragma once

#include "core/config/trainer_options.h"
#include "core/controller/builtins.h"
#include "core/controller/reward_module.h"
#include "core/graph/experiment.h"
#include "core/profile/run_profile.h"
#include "core/rpc/worker_group.h"

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <stop_token>
#include <string>
#include <vector>

namespace rlwb::core {

// When one node ran within a pass (seconds since the runner was made).
struct NodeSpan {
  std::string node;
  double start = 0, end = 0;
};

struct StepReport {
  int64_t step = 0;
  double seconds = 0;
  std::vector<NodeSpan> spans;
  std::map<std::string, double> metrics;  // timing_s/<node>, compute_s/<node>, the nodes' metrics
  Batch batch;                            // every column the pass produced
  // Per node, in the order they finished: dispatch, each rank's compute and
  // reply, collect, and the nodes it read from (the profiler's step rows).
  std::vector<profile::NodeTiming> timings;
};

// A pass ended because a stop was requested (Ctrl-C, the GUI's stop).
class StopRequested : public std::runtime_error {
 public:
  StopRequested() : std::runtime_error("interrupted by the user (Ctrl-C)") {}
};

// The models and reward modules a graph's nodes call, by name (builtins
// come from the build's registry).
struct NodeTargets {
  std::map<std::string, std::unique_ptr<WorkerGroup>> models;
  std::map<std::string, std::unique_ptr<RewardModule>> rewards;
};

class GraphRunner {
 public:
  // The builtin nodes' state kept between passes, by node id (a checkpoint
  // saves it; a resume puts it back before the first pass).
  const std::map<std::string, nlohmann::json>& node_state() const { return node_state_; }
  void restore_node_state(std::map<std::string, nlohmann::json> state) { node_state_ = std::move(state); }

  // `trainer` reaches the builtins; `run_id` the workers' call context.
  GraphRunner(NodeTargets& targets, const Builtins& builtins, const config::TrainerOptions& trainer,
              int64_t run_id, std::stop_token stop);

  // Runs `nodes` once over `state`. Throws: a node's failure (naming the
  // node and its call), a node that does not return a bound output port, a
  // graph that cannot go on (a column never produced), StopRequested.
  // With `profile`, the workers profile the pass's calls (the call
  // context's "profile"; workers/profiler).
  StepReport run(const std::vector<NodeSpec>& nodes, Batch state, int64_t step, bool profile = false);

  double seconds_since_start() const;
  // When the runner's clock (NodeSpan, NodeTiming) began.
  std::chrono::steady_clock::time_point start_time() const { return t0_; }

 private:
  struct Finished;
  struct Running;
  // A local node (builtin or reward module) runs in this process; the
  // others are calls to a model's workers.
  bool is_local(const NodeSpec& node) const;
  // Starts `node`; a local node with `on_this_thread` runs to its end
  // before this returns.
  // `keep_as`: the workers keep a worker node's outputs under this token
  // for the nodes started behind it (start_after).
  Running start(const NodeSpec& node, const Batch& state, int64_t step, bool profile, Finished& finished,
                size_t index, bool on_this_thread = false, const std::string& keep_as = "");
  // The worker nodes that may start right behind worker node `first`, before
  // it ends: they wait for no column but `first`'s, and their workers keep
  // `first`'s outputs for them (WorkerGroup::can_follow).
  std::vector<size_t> followers(const std::vector<NodeSpec>& nodes, size_t first, const Batch& state,
                                const std::map<size_t, Running>& running, const std::set<size_t>& done) const;
  // Starts `node` behind `first` (started with keep_as = `token`): the
  // columns `first` writes come from the workers' own copies of its outputs.
  Running start_after(const NodeSpec& first, const GroupCall& first_call, const std::string& token,
                      const NodeSpec& node, const Batch& state, int64_t step, bool profile);
  nlohmann::json call_context(const NodeSpec& node, int64_t step, bool profile) const;

  NodeTargets& targets_;
  const Builtins& builtins_;
  const config::TrainerOptions& trainer_;
  int64_t run_id_;
  std::stop_token stop_;
  std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
  // Builtin state kept from one pass to the next (the adaptive KL
  // coefficient, Safe-RLHF's multiplier), by node id.
  std::map<std::string, nlohmann::json> node_state_;
};

}  // namespace rlwb::core
