// A model as the controller sees it: one role instance on each rank of a
// resource pool's worker processes, with a parallel mesh. `call` looks up
// the method's dispatch mode (declared on the worker side, sent at
// registration and read into this group's method table once), fans the
// Batch out, and returns a GroupCall: the merged result once every called
// rank has replied. Several WorkerGroups may share the same processes
// (colocated models): calls are addressed by model name.
#pragma once

#include "core/rpc/dispatch.h"
#include "core/rpc/rpc_server.h"

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

// Where a call's time went, on the controller's clock (seconds since the
// call began): for the profiler's per-node breakdown (core/profile).
struct CallTiming {
  double dispatch_s = 0;        // splitting the batch, encoding and sending every rank's part
  std::vector<double> reply_s;  // per rank: when its reply was in; -1 for ranks not called
  std::vector<int64_t> rows;    // per rank: the rows it was sent
  double collect_s = 0;         // merging the replies
};

struct GroupResult {
  Batch merged;                 // the node's output
  std::vector<Batch> per_rank;  // every rank's reply (empty for ranks not called)
  CallTiming timing;
};

namespace group_detail {
struct CallState;
}

// One call on a group: the replies of its ranks. It is ready when every
// called rank has replied or one has failed (the others may then be stuck
// in a collective waiting for the failed rank, so nobody waits for them).
// No thread watches it: the replies complete it.
class GroupCall {
 public:
  GroupCall() = default;
  bool valid() const { return state_ != nullptr; }
  // Waits until ready; the merged result, or the first failed rank's
  // RemoteError. Call once.
  GroupResult get();
  // How the call split its rows over the ranks (valid before get()).
  const DispatchPlan& plan() const;
  // True when ready within `timeout`.
  bool wait_for(std::chrono::milliseconds timeout);
  // Calls `hook` once when ready (at once if it is): on the thread that
  // completes the last reply, under the RPC endpoint's lock -- so, as for
  // ReplyFuture::on_ready, short, no throwing, no calls into the RPC.
  // get and wait_for return only after the hook has run.
  void on_ready(std::function<void()> hook);

 private:
  friend class WorkerGroup;
  explicit GroupCall(std::shared_ptr<group_detail::CallState> state) : state_(std::move(state)) {}
  std::shared_ptr<group_detail::CallState> state_;
};

class WorkerGroup {
 public:
  // `generation`: the mesh a split_generation_mesh method (the actor's
  // generate) runs on when the model generates with another layout than
  // it trains (the 3D-HybridEngine's replicas, a folded Mesh); `mesh` when
  // not given. Both cover the same ranks.
  WorkerGroup(RpcServer& rpc, std::string model, std::string role, std::string pool, Mesh mesh,
              std::optional<Mesh> generation = std::nullopt);

  const std::string& model() const { return model_; }
  const std::string& role() const { return role_; }
  const std::string& pool() const { return pool_; }
  const Mesh& mesh() const { return mesh_; }
  const Mesh& generation_mesh() const { return generation_mesh_; }
  std::vector<std::string> worker_ids() const;

  // Dispatch mode of a method of this group's role, as the workers declared
  // it. Throws std::runtime_error when the role has no such method.
  DispatchMode dispatch_mode(const std::string& method) const;

  // `args` reach the method as CallContext::args (per-call options such as
  // greedy decoding or a checkpoint directory); `context` is the profiling
  // context (run, step, node).
  GroupCall call(const std::string& method, const Batch& input,
                 nlohmann::json context = nlohmann::json::object(),
                 const nlohmann::json& args = nlohmann::json::object());
  // Whether a call of `method` may go right behind a call of `first_method`
  // on `first` with `rows` input rows, and take that call's outputs on each
  // rank where they are (call_after): the same worker processes; both
  // methods split rows over the same ranks, purely data-parallel (no tp or
  // pp: every rank holds its rows' outputs); the rows split evenly (no
  // padding); and `first_method` declared one output row per input row
  // (workers/method_registry.h, keeps_rows).
  bool can_follow(const WorkerGroup& first, const std::string& first_method, const std::string& method,
                  int64_t rows) const;
  // The meta a call's input carries so that each rank keeps the call's
  // outputs under `token` for the calls sent behind it.
  static void keep_outputs(Batch& input, const std::string& token);
  // Sends `method` right behind `first` (a call whose input was marked with
  // keep_outputs(token), allowed by can_follow), before `first` has
  // replied: each rank runs it after `first`, on `first`'s outputs there --
  // `from_first` maps this method's input port to `first`'s output port --
  // together with `input`, the columns from the controller (the same rows
  // as `first`'s input, or none). A rank where `first` failed fails this
  // call too.
  GroupCall call_after(const GroupCall& first, const std::string& token,
                       const std::map<std::string, std::string>& from_first, const std::string& method,
                       Batch input, nlohmann::json context = nlohmann::json::object(),
                       const nlohmann::json& args = nlohmann::json::object());
  // all_to_all: one input per rank.
  GroupCall call_per_rank(const std::string& method, const std::vector<Batch>& inputs,
                          nlohmann::json context = nlohmann::json::object());

  // Creates the role instance on every rank (kInitModelMethod).
  void init(const nlohmann::json& config);

 private:
  // `after`: the call this one goes right behind on the same ranks
  // (call_after); each rank works on its rows, so its plan's rows stand
  // for this call's whatever the controller sends.
  GroupCall run(DispatchMode mode, const std::string& method, const Batch& input,
                const std::vector<Batch>& per_rank, const nlohmann::json& args, const nlohmann::json& context,
                const GroupCall* after = nullptr);
  struct MethodInfo {
    DispatchMode mode = DispatchMode::split_dp;
    bool keeps_rows = false;
  };
  // The role's methods as the workers declared them, from rank 0's register
  // message; read on first use (the workers have registered by then).
  const std::map<std::string, MethodInfo>& methods() const;
  const MethodInfo& method_info(const std::string& method) const;  // throws for an unknown method
  // The mesh a method of `mode` splits its rows over.
  const Mesh& mesh_of(DispatchMode mode) const;

  RpcServer& rpc_;
  std::string model_, role_, pool_;
  Mesh mesh_, generation_mesh_;
  mutable std::map<std::string, MethodInfo> methods_;
};

}  // namespace rlwb::core
