#include "core/rpc/worker_group.h"

#include <condition_variable>
#include <mutex>

namespace rlwb::core {

namespace group_detail {

// What the ranks' reply hooks share. Guarded by `mu`; the hooks run under
// the RPC endpoint's lock and take `mu` after it (never the other order).
struct CallState {
  DispatchMode mode = DispatchMode::split_dp;
  Mesh mesh;
  DispatchPlan plan;
  std::vector<ReplyFuture> replies;  // one per rank; invalid for ranks not called

  std::mutex mu;
  std::condition_variable cv;
  size_t remaining = 0;  // replies not in yet
  bool failed = false;   // a reply came back as an error
  bool ready = false;    // remaining == 0 or failed
  std::function<void()> hook;

  // A rank's reply is in (ok or not): called by that reply's hook.
  void reply_arrived(bool ok) {
    std::function<void()> run;
    {
      std::lock_guard<std::mutex> lock(mu);
      --remaining;
      failed = failed || !ok;
      if (ready || (remaining > 0 && ok)) return;
      ready = true;
      run = std::exchange(hook, nullptr);
    }
    cv.notify_all();
    if (run) run();
  }
};

}  // namespace group_detail

using group_detail::CallState;

bool GroupCall::wait_for(std::chrono::milliseconds timeout) {
  if (!state_) throw std::logic_error("GroupCall::wait_for on an empty call");
  std::unique_lock<std::mutex> lock(state_->mu);
  return state_->cv.wait_for(lock, timeout, [&] { return state_->ready; });
}

void GroupCall::on_ready(std::function<void()> hook) {
  if (!state_) throw std::logic_error("GroupCall::on_ready on an empty call");
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    if (!state_->ready) {
      state_->hook = std::move(hook);
      return;
    }
  }
  hook();
}

GroupResult GroupCall::get() {
  if (!state_) throw std::logic_error("GroupCall::get on an empty call");
  auto state = std::move(state_);
  {
    std::unique_lock<std::mutex> lock(state->mu);
    state->cv.wait(lock, [&] { return state->ready; });
  }
  GroupResult result;
  result.per_rank.resize(state->replies.size());
  if (state->failed)  // rethrow the failure of the first rank (in rank order) that is in
    for (auto& reply : state->replies)
      if (reply.valid() && reply.wait_for(std::chrono::milliseconds(0))) reply.get();
  for (size_t r = 0; r < state->replies.size(); ++r)
    if (state->replies[r].valid()) result.per_rank[r] = state->replies[r].get();
  result.merged = collect_replies(state->mode, state->mesh, state->plan, result.per_rank);
  return result;
}

WorkerGroup::WorkerGroup(RpcServer& rpc, std::string model, std::string role, std::string pool, Mesh mesh)
    : rpc_(rpc), model_(std::move(model)), role_(std::move(role)), pool_(std::move(pool)), mesh_(mesh) {}

std::vector<std::string> WorkerGroup::worker_ids() const {
  std::vector<std::string> ids;
  for (int r = 0; r < mesh_.world(); ++r) ids.push_back(worker_id(pool_, r));
  return ids;
}

const std::map<std::string, DispatchMode>& WorkerGroup::methods() const {
  if (!methods_.empty()) return methods_;
  auto info = rpc_.worker(worker_id(pool_, 0));
  if (!info)
    throw std::runtime_error("model '" + model_ + "': worker " + worker_id(pool_, 0) + " is not registered");
  if (!info->roles.contains(role_))
    throw std::runtime_error("model '" + model_ + "': the workers have no role '" + role_ + "'");
  std::map<std::string, DispatchMode> methods;
  for (auto& [name, mode] : info->roles[role_].items())
    methods[name] = dispatch_mode_from_name(mode.get<std::string>());
  methods_ = std::move(methods);
  return methods_;
}

DispatchMode WorkerGroup::dispatch_mode(const std::string& method) const {
  const auto& table = methods();
  auto it = table.find(method);
  if (it == table.end()) {
    std::string known;
    for (auto& [name, mode] : table) known += (known.empty() ? "" : ", ") + name;
    throw std::runtime_error("model '" + model_ + "' (role " + role_ + ") has no method '" + method +
                             "'; it has: " + known);
  }
  return it->second;
}

GroupCall WorkerGroup::call(const std::string& method, const Batch& input, nlohmann::json context,
                            const nlohmann::json& args) {
  return run(dispatch_mode(method), method, input, {}, args, context);
}

GroupCall WorkerGroup::call_per_rank(const std::string& method, const std::vector<Batch>& inputs,
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

GroupCall WorkerGroup::run(DispatchMode mode, const std::string& method, const Batch& input,
                           const std::vector<Batch>& per_rank, const nlohmann::json& args,
                           const nlohmann::json& context) {
  auto state = std::make_shared<CallState>();
  state->mode = mode;
  state->mesh = mesh_;
  state->plan = plan_dispatch(mode, mesh_, input, per_rank);
  for (int r = 0; r < mesh_.world(); ++r) {
    if (!state->plan.inputs[r]) {
      state->replies.emplace_back();
      continue;
    }
    state->replies.push_back(
        rpc_.call(worker_id(pool_, r), model_, method, *state->plan.inputs[r], args, context));
    state->plan.inputs[r].reset();  // the wire holds what it needs
  }
  for (auto& reply : state->replies) state->remaining += reply.valid();
  if (state->remaining == 0) {
    state->ready = true;
    return GroupCall(state);
  }
  // Hooks hold the state weakly: the replies are inside it.
  std::weak_ptr<CallState> weak = state;
  for (auto& reply : state->replies) {
    if (!reply.valid()) continue;
    reply.on_ready([weak](bool ok) {
      if (auto s = weak.lock()) s->reply_arrived(ok);
    });
  }
  return GroupCall(state);
}

}  // namespace rlwb::core
