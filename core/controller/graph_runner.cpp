#include "core/controller/graph_runner.h"

#include "core/controller/node_ports.h"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <future>
#include <mutex>
#include <set>

namespace rlwb::core {
namespace {

std::string describe_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown error";
  }
}

// Runs a local (builtin or reward) node's function and puts its time in
// the result's meta as compute_s, as a worker's reply carries its method's
// time: every node reports compute time one way.
template <typename Fn>
Batch timed_call(Fn&& fn) {
  const auto start = std::chrono::steady_clock::now();
  Batch out = fn();
  if (!out.meta().contains("compute_s"))
    out.meta()["compute_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// A local node's work as a future: on a thread of its own, or run here and
// now (GraphRunner::run says when), its result or its exception kept in a
// ready future.
template <typename Fn>
std::future<Batch> run_local(bool on_this_thread, Fn&& fn) {
  if (!on_this_thread) return std::async(std::launch::async, std::forward<Fn>(fn));
  std::promise<Batch> result;
  try {
    result.set_value(fn());
  } catch (...) {
    result.set_exception(std::current_exception());
  }
  return result.get_future();
}

}  // namespace

// Nodes that finished, in the order they did; a stop request wakes the
// waiter too. Shared with the nodes' completions, which may come after a
// failed pass has returned.
struct GraphRunner::Finished {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<size_t> nodes;
  void post(size_t node) {
    {
      std::lock_guard<std::mutex> lock(mu);
      nodes.push_back(node);
    }
    cv.notify_one();
  }
  void wake() {
    { std::lock_guard<std::mutex> lock(mu); }
    cv.notify_one();
  }
};

// A started node: a worker call, or a local node's thread.
struct GraphRunner::Running {
  GroupCall call;            // worker nodes
  std::future<Batch> local;  // builtin and reward nodes
  double start = 0;
  int64_t input_rows = 0;
  GroupResult get() {
    if (call.valid()) return call.get();
    GroupResult result;
    result.merged = local.get();
    return result;
  }
};

namespace {

// What the profiler keeps of a finished node (core/profile/run_profile.h).
profile::NodeTiming node_timing(const NodeSpec& node, const GroupResult& result, double start, double end,
                                int64_t input_rows, const std::string& kind, const std::string& pool,
                                std::vector<std::string> after) {
  profile::NodeTiming t;
  t.node = node.id;
  t.call = node.call;
  t.kind = kind;
  t.pool = pool;
  t.start = start;
  t.end = end;
  t.after = std::move(after);
  auto compute_of = [](const Batch& reply) {
    const auto& meta = reply.meta();
    return meta.is_object() && meta.contains("compute_s") && meta["compute_s"].is_number()
               ? meta["compute_s"].get<double>()
               : 0.0;
  };
  if (kind != "worker") {
    t.ranks.push_back({0, compute_of(result.merged), end - start, input_rows});
    return t;
  }
  t.dispatch_s = result.timing.dispatch_s;
  t.collect_s = result.timing.collect_s;
  for (size_t r = 0; r < result.per_rank.size(); ++r)
    if (r < result.timing.reply_s.size() && result.timing.reply_s[r] >= 0)
      t.ranks.push_back({static_cast<int>(r), compute_of(result.per_rank[r]), result.timing.reply_s[r],
                         result.timing.rows[r]});
  return t;
}

}  // namespace

GraphRunner::GraphRunner(NodeTargets& targets, const Builtins& builtins,
                         const config::TrainerOptions& trainer, int64_t run_id, std::stop_token stop)
    : targets_(targets), builtins_(builtins), trainer_(trainer), run_id_(run_id), stop_(std::move(stop)) {}

double GraphRunner::seconds_since_start() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
}

bool GraphRunner::is_local(const NodeSpec& node) const {
  return node.target == "builtin" || targets_.rewards.count(node.target) > 0;
}

GraphRunner::Running GraphRunner::start(const NodeSpec& node, const Batch& state, int64_t step, bool profile,
                                        Finished& finished_ref, size_t index, bool on_this_thread,
                                        const std::string& keep_as) {
  Running running;
  running.start = seconds_since_start();
  running.input_rows = state.rows();
  Batch input = port_inputs(node, state);  // the callee sees its ports, not the graph's columns
  if (!keep_as.empty()) WorkerGroup::keep_outputs(input, keep_as);
  WantedPorts wanted(wanted_out_ports(node));
  // Posts when the node's thread ends, also when it throws.
  struct PostWhenDone {
    Finished* finished;
    size_t node;
    ~PostWhenDone() { finished->post(node); }
  };
  Finished* finished = &finished_ref;
  if (node.target == "builtin") {
    auto fn_it = builtins_.find(node.method);
    if (fn_it == builtins_.end())
      throw std::runtime_error("node '" + node.id + "': this controller has no builtin '" + node.method +
                               "'");
    BuiltinFn fn = fn_it->second.fn;
    nlohmann::json& kept = node_state_[node.id];  // a node runs at most once at a time
    running.local = run_local(on_this_thread, [this, fn, input = std::move(input), wanted = std::move(wanted),
                                               &node, &kept, step, finished, index]() {
      PostWhenDone done{finished, index};
      BuiltinContext ctx{step, trainer_, wanted, kept, node.args};
      return timed_call([&] { return fn(input, ctx); });
    });
    return running;
  }
  if (auto r = targets_.rewards.find(node.target); r != targets_.rewards.end()) {
    RewardModule* module = r->second.get();
    running.local = run_local(on_this_thread, [module, input = std::move(input), wanted = std::move(wanted),
                                               &node, step, finished, index]() {
      PostWhenDone done{finished, index};
      RewardCallContext ctx{step, node.id, wanted};
      return timed_call([&] { return module->call(node.method, input, ctx); });
    });
    return running;
  }
  auto g = targets_.models.find(node.target);
  if (g == targets_.models.end())
    throw std::runtime_error("node '" + node.id + "' calls unknown model '" + node.target + "'");
  running.call = g->second->call(node.method, input, call_context(node, step, profile), node.args);
  return running;
}

nlohmann::json GraphRunner::call_context(const NodeSpec& node, int64_t step, bool profile) const {
  // The output ports the node binds travel with the call (CallContext::out).
  nlohmann::json context = {{"run", run_id_},
                            {"step", step},
                            {"node", node.id},
                            {"out", *WantedPorts(wanted_out_ports(node)).named()}};
  if (profile) context["profile"] = true;
  return context;
}

std::vector<size_t> GraphRunner::followers(const std::vector<NodeSpec>& nodes, size_t first,
                                           const Batch& state, const std::map<size_t, Running>& running,
                                           const std::set<size_t>& done) const {
  std::vector<size_t> out;
  const NodeSpec& p = nodes[first];
  const auto& models = targets_.models;
  for (size_t j = 0; j < nodes.size(); ++j) {
    const NodeSpec& n = nodes[j];
    if (j == first || done.count(j) || running.count(j) || !models.count(n.target)) continue;
    bool needs_first = false, ready_with_first = true;
    for (const auto& col : n.in) {
      const bool from_first = std::find(p.out.begin(), p.out.end(), col) != p.out.end();
      needs_first = needs_first || from_first;
      ready_with_first = ready_with_first && (from_first || state.has(col));
    }
    if (needs_first && ready_with_first &&
        models.at(n.target)->can_follow(*models.at(p.target), p.method, n.method, state.rows()))
      out.push_back(j);
  }
  return out;
}

GraphRunner::Running GraphRunner::start_after(const NodeSpec& first, const GroupCall& first_call,
                                              const std::string& token, const NodeSpec& node,
                                              const Batch& state, int64_t step, bool profile) {
  Running running;
  running.start = seconds_since_start();
  running.input_rows = state.rows();
  Batch input;  // the columns the controller has; the others stay on the workers
  std::map<std::string, std::string> from_first;
  for (size_t i = 0; i < node.in.size(); ++i) {
    auto produced = std::find(first.out.begin(), first.out.end(), node.in[i]);
    if (produced != first.out.end())
      from_first[node.in_port(i)] = first.out_port(static_cast<size_t>(produced - first.out.begin()));
    else
      input.share_column(state, node.in[i], node.in_port(i));
  }
  input.meta() = state.meta();
  running.call = targets_.models.at(node.target)
                     ->call_after(first_call, token, from_first, node.method, std::move(input),
                                  call_context(node, step, profile), node.args);
  return running;
}

StepReport GraphRunner::run(const std::vector<NodeSpec>& nodes, Batch state, int64_t step, bool profile) {
  StepReport report;
  report.step = step;
  auto finished = std::make_shared<Finished>();
  std::stop_callback wake_on_stop(stop_, [finished] { finished->wake(); });
  // Local nodes' futures wait for their threads when destroyed (also when
  // this pass throws); worker calls post through the shared `finished`.
  std::map<size_t, Running> running;
  std::set<size_t> done;
  std::map<std::string, std::string> producer;  // column -> the node that wrote it
  while (done.size() < nodes.size()) {
    // A stop ends the pass at a node boundary: before it starts, or once the
    // nodes that were running have ended. Checked here as well as in the
    // wait below, which does not see it when a node had already finished
    // (a fast reply that came before the wait) and would go on pass after pass.
    if (stop_.stop_requested()) throw StopRequested();
    std::vector<size_t> ready_local;
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (done.count(i) || running.count(i)) continue;
      bool ready = true;
      for (auto& col : nodes[i].in) ready = ready && state.has(col);
      if (!ready) continue;
      if (is_local(nodes[i])) {
        ready_local.push_back(i);
        continue;
      }
      // Worker nodes waiting only for this one's columns, on the same
      // workers, go right behind it (start_after).
      std::vector<size_t> behind = followers(nodes, i, state, running, done);
      const std::string token = nodes[i].id + "@" + std::to_string(step);
      running[i] = start(nodes[i], state, step, profile, *finished, i, false, behind.empty() ? "" : token);
      running[i].call.on_ready([finished, i] { finished->post(i); });
      for (size_t j : behind) {
        running[j] = start_after(nodes[i], running[i].call, token, nodes[j], state, step, profile);
        running[j].call.on_ready([finished, j] { finished->post(j); });
      }
    }
    // Worker calls are sent first, then the local nodes start. A builtin
    // that no other local node runs beside (the advantages once the
    // rewards are in) runs on this thread: a thread of its own cost a start
    // and a wait for a core while the workers compute -- 2.2-3.2 ms beyond
    // the advantages' 0.6 ms on 2 cores (bench/RESULTS.md, Orchestration).
    // Builtins are arithmetic over the batch, milliseconds; a worker reply
    // that comes meanwhile is taken when it ends. Reward modules (a
    // sandbox run may take seconds) keep their threads.
    for (size_t k = 0; k < ready_local.size(); ++k) {
      const size_t i = ready_local[k];
      bool local_running = false;
      for (auto& [other, r] : running) local_running = local_running || r.local.valid();
      const bool here = nodes[i].target == "builtin" && !local_running && k + 1 == ready_local.size();
      running[i] = start(nodes[i], state, step, profile, *finished, i, here);
    }
    if (running.empty())
      throw std::runtime_error("graph is stuck: no node can start (a column is never produced)");
    std::vector<size_t> ended;
    {
      std::unique_lock<std::mutex> lock(finished->mu);
      finished->cv.wait(lock, [&] { return !finished->nodes.empty() || stop_.stop_requested(); });
      if (finished->nodes.empty()) throw StopRequested();
      ended.assign(finished->nodes.begin(), finished->nodes.end());
      finished->nodes.clear();
    }
    for (size_t index : ended) {
      auto it = running.find(index);
      const NodeSpec& node = nodes[index];
      GroupResult result;
      try {
        result = it->second.get();
      } catch (...) {
        throw std::runtime_error("node '" + node.id + "' (" + node.call +
                                 ") failed: " + describe_exception(std::current_exception()));
      }
      double end = seconds_since_start();
      Batch& out = result.merged;
      report.spans.push_back({node.id, it->second.start, end});
      {
        std::vector<std::string> after;
        for (auto& col : node.in)
          if (auto p = producer.find(col);
              p != producer.end() && std::find(after.begin(), after.end(), p->second) == after.end())
            after.push_back(p->second);
        const bool worker = targets_.models.count(node.target) > 0;
        const std::string kind = node.target == "builtin" ? "builtin" : worker ? "worker" : "reward";
        const std::string pool = worker ? targets_.models.at(node.target)->pool() : "";
        report.timings.push_back(node_timing(node, result, it->second.start, end, it->second.input_rows, kind,
                                             pool, std::move(after)));
        for (auto& col : node.out) producer[col] = node.id;
      }
      report.metrics["timing_s/" + node.id] = end - it->second.start;
      // Worker methods report their own compute time (rank 0's reply), local nodes theirs.
      if (out.meta().contains("compute_s") && out.meta()["compute_s"].is_number())
        report.metrics["compute_s/" + node.id] = out.meta()["compute_s"].get<double>();
      if (out.meta().contains("metrics"))
        for (auto& [k, v] : out.meta()["metrics"].items())
          if (v.is_number()) report.metrics[k] = v.get<double>();
      state.union_with(column_outputs(node, out));  // ports back to the node's columns
      done.insert(index);
      running.erase(it);
    }
  }
  report.batch = std::move(state);
  return report;
}

}  // namespace rlwb::core
