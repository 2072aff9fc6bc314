#include "core/rpc/worker_group.h"

namespace rlwb::core {

WorkerGroup::WorkerGroup(RpcServer& rpc, std::string model, std::string role, std::string pool, Mesh mesh)
    : rpc_(rpc), model_(std::move(model)), role_(std::move(role)), pool_(std::move(pool)), mesh_(mesh) {}

std::vector<std::string> WorkerGroup::worker_ids() const {
  std::vector<std::string> ids;
  for (int r = 0; r < mesh_.world(); ++r) ids.push_back(worker_id(pool_, r));
  return ids;
}

DispatchMode WorkerGroup::dispatch_mode(const std::string& method) const {
  auto info = rpc_.worker(worker_id(pool_, 0));
  if (!info)
    throw std::runtime_error("model '" + model_ + "': worker " + worker_id(pool_, 0) + " is not registered");
  const auto& roles = info->roles;
  if (!roles.contains(role_))
    throw std::runtime_error("model '" + model_ + "': the workers have no role '" + role_ + "'");
  const auto& methods = roles[role_];
  if (!methods.contains(method)) {
    std::string known;
    for (auto& [name, mode] : methods.items()) known += (known.empty() ? "" : ", ") + name;
    throw std::runtime_error("model '" + model_ + "' (role " + role_ + ") has no method '" + method +
                             "'; it has: " + known);
  }
  return dispatch_mode_from_name(methods[method].get<std::string>());
}

std::future<GroupResult> WorkerGroup::call(const std::string& method, const Batch& input,
                                           nlohmann::json context, const nlohmann::json& args) {
  return run(dispatch_mode(method), method, input, {}, args, context);
}

std::future<GroupResult> WorkerGroup::call_per_rank(const std::string& method,
                                                    const std::vector<Batch>& inputs,
                                                    nlohmann::json context) {
  return run(DispatchMode::all_to_all, method, Batch{}, inputs, nlohmann::json::object(), context);
}

void WorkerGroup::init(const nlohmann::json& config) {
  std::vector<ReplyFuture> replies;
  for (int r = 0; r < mesh_.world(); ++r) {
    nlohmann::json args = {{"role", role_},
                           {"config", config},
                           {"mesh", {{"dp", mesh_.dp}, {"pp", mesh_.pp}, {"tp", mesh_.tp}}}};
    replies.push_back(rpc_.call(worker_id(pool_, r), model_, kInitModelMethod, Batch{}, args));
  }
  for (auto& f : replies) f.get();  // rethrows the first RemoteError
}

std::future<GroupResult> WorkerGroup::run(DispatchMode mode, const std::string& method, const Batch& input,
                                          const std::vector<Batch>& per_rank, const nlohmann::json& args,
                                          const nlohmann::json& context) {
  auto plan = std::make_shared<DispatchPlan>(plan_dispatch(mode, mesh_, input, per_rank));
  auto futures = std::make_shared<std::vector<ReplyFuture>>();
  for (int r = 0; r < mesh_.world(); ++r) {
    if (!plan->inputs[r]) {
      futures->emplace_back();
      continue;
    }
    futures->push_back(rpc_.call(worker_id(pool_, r), model_, method, *plan->inputs[r], args, context));
    plan->inputs[r].reset();  // the wire holds what it needs
  }
  Mesh mesh = mesh_;
  return std::async(std::launch::async, [mode, mesh, plan, futures]() {
    GroupResult result;
    result.per_rank.resize(futures->size());
    // Report the first failure at once: the other ranks may be stuck in a
    // collective waiting for the failed one.
    std::vector<bool> done(futures->size(), false);
    size_t remaining = 0;
    for (auto& f : *futures) remaining += f.valid();
    while (remaining > 0) {
      for (size_t r = 0; r < futures->size(); ++r) {
        auto& f = (*futures)[r];
        if (done[r] || !f.valid()) continue;
        if (!f.wait_for(std::chrono::milliseconds(remaining == 1 ? 100 : 2))) continue;
        done[r] = true;
        --remaining;
        result.per_rank[r] = f.get();  // throws RemoteError for a failed rank
      }
    }
    result.merged = collect_replies(mode, mesh, *plan, result.per_rank);
    return result;
  });
}

}  // namespace rlwb::core
