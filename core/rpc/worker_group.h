// A model as the controller sees it: one role instance on each rank of a
// resource pool's worker processes, with a parallel mesh. `call` looks up
// the method's dispatch mode (declared on the worker side and sent at
// registration), fans the Batch out, and returns a future of the merged
// result. Several WorkerGroups may share the same processes (colocated
// models): calls are addressed by model name.
#pragma once

#include "core/rpc/dispatch.h"
#include "core/rpc/rpc_server.h"

#include <future>
#include <string>
#include <vector>

namespace rlwb::core {

struct GroupResult {
  Batch merged;                 // the node's output
  std::vector<Batch> per_rank;  // every rank's reply (empty for ranks not called)
};

class WorkerGroup {
 public:
  WorkerGroup(RpcServer& rpc, std::string model, std::string role, std::string pool, Mesh mesh);

  const std::string& model() const { return model_; }
  const std::string& role() const { return role_; }
  const std::string& pool() const { return pool_; }
  const Mesh& mesh() const { return mesh_; }
  std::vector<std::string> worker_ids() const;

  // Dispatch mode of a method of this group's role, as the workers declared
  // it. Throws std::runtime_error when the role has no such method.
  DispatchMode dispatch_mode(const std::string& method) const;

  // `args` reach the method as CallContext::args (per-call options such as
  // greedy decoding or a checkpoint directory); `context` is the profiling
  // context (run, step, node).
  std::future<GroupResult> call(const std::string& method, const Batch& input,
                                nlohmann::json context = nlohmann::json::object(),
                                const nlohmann::json& args = nlohmann::json::object());
  // all_to_all: one input per rank.
  std::future<GroupResult> call_per_rank(const std::string& method, const std::vector<Batch>& inputs,
                                         nlohmann::json context = nlohmann::json::object());

  // Creates the role instance on every rank (kInitModelMethod).
  void init(const nlohmann::json& config);

 private:
  std::future<GroupResult> run(DispatchMode mode, const std::string& method, const Batch& input,
                               const std::vector<Batch>& per_rank, const nlohmann::json& args,
                               const nlohmann::json& context);

  RpcServer& rpc_;
  std::string model_, role_, pool_;
  Mesh mesh_;
};

}  // namespace rlwb::core
