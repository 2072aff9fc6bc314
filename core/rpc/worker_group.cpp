#include "core/rpc/worker_group.h"

#include "core/rpc/protocol.h"

#include <chrono>
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
  std::chrono::steady_clock::time_point began = std::chrono::steady_clock::now();
  CallTiming timing;  // reply_s is written by the ranks' hooks, under `mu`

  std::mutex mu;
  std::condition_variable cv;
  size_t remaining = 0;     // replies not in yet
  bool failed = false;      // a reply came back as an error
  bool completing = false;  // remaining == 0 or failed: the hook is taken or runs at once
  bool ready = false;       // completing, and the hook has run: waiters may go on
  std::function<void()> hook;

  // A rank's reply is in (ok or not): called by that reply's hook. The hook
  // runs before `ready` is published, so whoever waits on the call sees its
  // effects -- the runner that is woken by it, or a test counting it.
  double since_began() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  }

  void reply_arrived(size_t rank, bool ok) {
    const double at = since_began();
    std::function<void()> run;
    {
      std::lock_guard<std::mutex> lock(mu);
      timing.reply_s[rank] = at;
      --remaining;
      failed = failed || !ok;
      if (completing || (remaining > 0 && ok)) return;
      completing = true;
      run = std::exchange(hook, nullptr);
    }
    if (run) run();
    {
      std::lock_guard<std::mutex> lock(mu);
      ready = true;
    }
    cv.notify_all();
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
    if (!state_->completing) {
      state_->hook = std::move(hook);
      return;
    }
  }
  hook();
}

const DispatchPlan& GroupCall::plan() const {
  if (!state_) throw std::logic_error("GroupCall::plan on an empty call");
  return state_->plan;
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
  const double collect_began = state->since_began();
  result.merged = collect_replies(state->mode, state->mesh, state->plan, result.per_rank);
  {
    std::lock_guard<std::mutex> lock(state->mu);
    result.timing = state->timing;
  }
  result.timing.collect_s = state->since_began() - collect_began;
  return result;
}

WorkerGroup::WorkerGroup(RpcServer& rpc, std::string model, std::string role, std::string pool, Mesh mesh,
                         std::optional<Mesh> generation)
    : rpc_(rpc),
      model_(std::move(model)),
      role_(std::move(role)),
      pool_(std::move(pool)),
      mesh_(mesh),
      generation_mesh_(generation.value_or(mesh)) {
  // The training mesh folded as core::generation_mesh folds it (the
  // training mesh itself when the layouts are the same).
  const Mesh& g = generation_mesh_;
  if (core::generation_mesh(mesh_, g.pp, g.tp) != g)
    throw std::invalid_argument("model '" + model_ + "': its generation mesh (dp " + std::to_string(g.dp) +
                                ", pp " + std::to_string(g.pp) + ", tp " + std::to_string(g.tp) +
                                ", folds pp " + std::to_string(g.pp_fold) + " tp " +
                                std::to_string(g.tp_fold) + ") is not its training mesh (dp " +
                                std::to_string(mesh_.dp) + ", pp " + std::to_string(mesh_.pp) + ", tp " +
                                std::to_string(mesh_.tp) + ") folded; build it with core::generation_mesh");
}

std::vector<std::string> WorkerGroup::worker_ids() const {
  std::vector<std::string> ids;
  for (int r = 0; r < mesh_.world(); ++r) ids.push_back(worker_id(pool_, r));
  return ids;
}

const std::map<std::string, WorkerGroup::MethodInfo>& WorkerGroup::methods() const {
  if (!methods_.empty()) return methods_;
  auto info = rpc_.worker(worker_id(pool_, 0));
  if (!info)
    throw std::runtime_error("model '" + model_ + "': worker " + worker_id(pool_, 0) + " is not registered");
  if (!info->roles.contains(role_))
    throw std::runtime_error("model '" + model_ + "': the workers have no role '" + role_ + "'");
  std::map<std::string, MethodInfo> methods;
  for (auto& [name, declared] : info->roles[role_].items())
    methods[name] = MethodInfo{dispatch_mode_from_name(declared.at("mode").get<std::string>()),
                               declared.value("keeps_rows", false)};
  methods_ = std::move(methods);
  return methods_;
}

const WorkerGroup::MethodInfo& WorkerGroup::method_info(const std::string& method) const {
  const auto& table = methods();
  auto it = table.find(method);
  if (it == table.end()) {
    std::string known;
    for (auto& [name, info] : table) known += (known.empty() ? "" : ", ") + name;
    throw std::runtime_error("model '" + model_ + "' (role " + role_ + ") has no method '" + method +
                             "'; it has: " + known);
  }
  return it->second;
}

DispatchMode WorkerGroup::dispatch_mode(const std::string& method) const { return method_info(method).mode; }

const Mesh& WorkerGroup::mesh_of(DispatchMode mode) const {
  return mode == DispatchMode::split_generation_mesh ? generation_mesh_ : mesh_;
}

bool WorkerGroup::can_follow(const WorkerGroup& first, const std::string& first_method,
                             const std::string& method, int64_t rows) const {
  auto splits_rows = [](DispatchMode mode) {
    return mode == DispatchMode::split_dp || mode == DispatchMode::split_dp_mesh ||
           mode == DispatchMode::split_generation_mesh;
  };
  const MethodInfo& before = first.method_info(first_method);
  const MethodInfo& after = method_info(method);
  if (first.pool_ != pool_ || !before.keeps_rows || !splits_rows(before.mode) || !splits_rows(after.mode))
    return false;
  const Mesh& a = first.mesh_of(before.mode);
  const Mesh& b = mesh_of(after.mode);
  // Every rank a data-parallel rank of its own, rank r the r-th chunk on both sides.
  return a == b && a.tp == 1 && a.pp == 1 && a.world() == first.mesh_.world() && a.world() == mesh_.world() &&
         rows > 0 && rows % a.world() == 0;
}

void WorkerGroup::keep_outputs(Batch& input, const std::string& token) {
  if (!input.meta().is_object()) input.meta() = nlohmann::json::object();
  input.meta()[kKeepOutputsKey] = token;
}

GroupCall WorkerGroup::call_after(const GroupCall& first, const std::string& token,
                                  const std::map<std::string, std::string>& from_first,
                                  const std::string& method, Batch input, nlohmann::json context,
                                  const nlohmann::json& args) {
  const DispatchPlan& before = first.plan();
  if (!input.empty() && input.rows() != before.input_rows)
    throw std::invalid_argument("call_after: " + std::to_string(input.rows()) +
                                " rows from the controller, but " + std::to_string(before.input_rows) +
                                " went to the call before");
  if (!input.meta().is_object()) input.meta() = nlohmann::json::object();
  input.meta().erase(kKeepOutputsKey);
  input.meta()[kInputsKeptKey] = {{"token", token}, {"columns", from_first}};
  return run(dispatch_mode(method), method, input, {}, args, context, &first);
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
    if (generation_mesh_ != mesh_)
      args["generation_mesh"] = {{"dp", generation_mesh_.dp},
                                 {"pp", generation_mesh_.pp},
                                 {"tp", generation_mesh_.tp},
                                 {"pp_fold", generation_mesh_.pp_fold},
                                 {"tp_fold", generation_mesh_.tp_fold}};
    replies.push_back(rpc_.call(worker_id(pool_, r), model_, kInitModelMethod, Batch{}, args));
  }
  for (auto& f : replies) f.get();  // rethrows the first RemoteError
}

GroupCall WorkerGroup::run(DispatchMode mode, const std::string& method, const Batch& input,
                           const std::vector<Batch>& per_rank, const nlohmann::json& args,
                           const nlohmann::json& context, const GroupCall* after) {
  auto state = std::make_shared<CallState>();
  state->mode = mode;
  state->mesh = mesh_of(mode);
  state->plan = plan_dispatch(mode, state->mesh, input, per_rank);
  state->timing.reply_s.assign(mesh_.world(), -1.0);
  state->timing.rows.assign(mesh_.world(), 0);
  // The ranks with an input, called together: every message encoded
  // before the first is sent (RpcServer::call_each).
  std::vector<std::string> workers;
  std::vector<Batch> inputs;
  std::vector<int> ranks;
  for (int r = 0; r < mesh_.world(); ++r) {
    if (!state->plan.inputs[r]) continue;
    state->timing.rows[r] = state->plan.inputs[r]->rows();
    workers.push_back(worker_id(pool_, r));
    inputs.push_back(std::move(*state->plan.inputs[r]));
    ranks.push_back(r);
    state->plan.inputs[r].reset();  // moved: the call owns it now
  }
  if (after != nullptr) {  // each rank works on the first call's rows
    // The first call's plan and rows are set before run() returns it and
    // never change after (call_after reads them too).
    state->plan.input_rows = after->state_->plan.input_rows;
    state->timing.rows = after->state_->timing.rows;
  }
  std::vector<ReplyFuture> sent = rpc_.call_each(workers, model_, method, std::move(inputs), args, context);
  state->replies.resize(static_cast<size_t>(mesh_.world()));
  for (size_t i = 0; i < ranks.size(); ++i)
    state->replies[static_cast<size_t>(ranks[i])] = std::move(sent[i]);
  for (auto& reply : state->replies) state->remaining += reply.valid();
  state->timing.dispatch_s = state->since_began();
  if (state->remaining == 0) {
    state->completing = state->ready = true;
    return GroupCall(state);
  }
  // Hooks hold the state weakly: the replies are inside it.
  std::weak_ptr<CallState> weak = state;
  for (size_t r = 0; r < state->replies.size(); ++r) {
    if (!state->replies[r].valid()) continue;
    state->replies[r].on_ready([weak, r](bool ok) {
      if (auto s = weak.lock()) s->reply_arrived(r, ok);
    });
  }
  return GroupCall(state);
}

}  // namespace rlwb::core
