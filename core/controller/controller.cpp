#include "core/controller/controller.h"

#include "core/controller/builtins.h"
#include "core/controller/node_ports.h"
#include "core/tasks/tasks.h"
#include "core/config/experiment_options.h"
#include "core/launch/local_launcher.h"

#include <torch/torch.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <ctime>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

namespace rlwb::core {
namespace {

using Clock = std::chrono::steady_clock;

class Interrupted : public std::runtime_error {
 public:
  Interrupted() : std::runtime_error("interrupted by the user (Ctrl-C)") {}
};

// A TCP port that was free a moment ago (for the c10d store of a pool).
int free_tcp_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    if (fd >= 0) close(fd);
    throw std::runtime_error("cannot find a free TCP port on 127.0.0.1 for the c10d store");
  }
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

std::string describe_exception(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown error";
  }
}

// One line per step on stderr: a bar, the reward, the last held-out score,
// the KL, tokens/s and the time left.
class ProgressLine {
 public:
  ProgressLine(int64_t steps, bool enabled) : steps_(steps), enabled_(enabled), start_(Clock::now()) {}

  void print(const StepReport& r, std::optional<double> held_out) const {
    if (!enabled_) return;
    double elapsed = std::chrono::duration<double>(Clock::now() - start_).count();
    double eta = r.step > 0 ? elapsed / r.step * (steps_ - r.step) : 0;
    const int width = 20;
    int filled = steps_ > 0 ? static_cast<int>(width * r.step / steps_) : width;
    std::string bar = std::string(filled, '#') + std::string(width - filled, '.');
    std::string line =
        "[rlwb] step " + std::to_string(r.step) + "/" + std::to_string(steps_) + " [" + bar + "]";
    auto add = [&](const char* label, const char* key, const char* fmt) {
      auto it = r.metrics.find(key);
      if (it == r.metrics.end()) return;
      char buf[64];
      std::snprintf(buf, sizeof buf, fmt, it->second);
      line += std::string("  ") + label + " " + buf;
    };
    add("reward", "critic/score/mean", "%.3f");
    if (held_out) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.3f", *held_out);
      line += std::string("  held-out ") + buf;
    }
    // The KL to the reference: as a loss term, or inside the reward.
    add("kl",
        r.metrics.count("actor/kl_loss")             ? "actor/kl_loss"
        : r.metrics.count("actor/reward_kl_penalty") ? "actor/reward_kl_penalty"
                                                     : "actor/ppo_kl",
        "%.4f");
    add("tok/s", "perf/throughput", "%.0f");
    char tail[64];
    std::snprintf(tail, sizeof tail, "  %.2f s/step  ETA %dm%02ds", r.seconds, static_cast<int>(eta) / 60,
                  static_cast<int>(eta) % 60);
    std::fprintf(stderr, "%s%s\n", line.c_str(), tail);
  }

 private:
  int64_t steps_;
  bool enabled_;
  Clock::time_point start_;
};

}  // namespace

struct Controller::Impl {
  Experiment exp;
  config::ExperimentOptions settings;  // exp's settings, parsed once before anything starts
  ControllerOptions options;
  TrackingWriter* tracking = nullptr;
  int64_t run_id = 0;
  Clock::time_point t0 = Clock::now();

  std::unique_ptr<LocalLauncher> launcher;
  std::unique_ptr<RpcServer> rpc;
  std::map<std::string, std::unique_ptr<WorkerGroup>> groups;           // by model name
  std::map<std::string, std::unique_ptr<RewardModule>> reward_modules;  // by reward name
  std::map<std::string, nlohmann::json> node_state;    // builtin state kept across steps, by node id
  std::vector<NodeSpec> warm_start_nodes, eval_nodes;  // from trainer.warm_start / trainer.eval
  std::string ipc_path;
  std::string run_folder;  // under options.checkpoint_dir, made on first use

  std::atomic<bool> monitor_stop{false};
  std::thread monitor;
  std::mutex exits_mu;
  std::vector<ProcessExit> exits;

  double since_start() const { return std::chrono::duration<double>(Clock::now() - t0).count(); }

  void event(const std::string& level, const std::string& text) {
    if (tracking && run_id) tracking->log_event(run_id, level, "controller", text);
  }

  void start_workers() {
    std::string address;
    if (options.transport == "tcp") {
      address = "tcp://127.0.0.1:0";
    } else {
      ipc_path = "/tmp/rlwb-" + std::to_string(getpid()) + "-" +
                 std::to_string(reinterpret_cast<uintptr_t>(this) & 0xffffff) + ".sock";
      address = "ipc://" + ipc_path;
      options.rpc.wire.shm_threshold_bytes =
          options.rpc.wire.shm_threshold_bytes ? options.rpc.wire.shm_threshold_bytes : (1u << 20);
    }
    rpc = std::make_unique<RpcServer>(address, options.rpc);
    std::string log_dir = options.log_dir;
    if (log_dir.empty()) log_dir = "runs/logs/run-" + std::to_string(run_id);
    launcher = std::make_unique<LocalLauncher>(log_dir);

    std::vector<std::string> ids;
    for (auto& [name, pool] : exp.pools) {
      int port = free_tcp_port();
      for (int r = 0; r < pool.workers; ++r) {
        ProcessSpec spec;
        spec.name = worker_id(name, r);
        spec.argv = {options.worker_binary,
                     "--controller",
                     rpc->address(),
                     "--group",
                     name,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(pool.workers),
                     "--device",
                     pool.device,
                     "--store",
                     "127.0.0.1:" + std::to_string(port),
                     "--shm-threshold",
                     std::to_string(options.rpc.wire.shm_threshold_bytes)};
        // Each worker gets one thread per core share, so a pool of N on a
        // small machine doesn't oversubscribe it N times.
        spec.env["OMP_NUM_THREADS"] = "1";
        launcher->start(spec);
        ids.push_back(spec.name);
      }
    }
    monitor = std::thread([this] {
      while (!monitor_stop) {
        for (auto& e : launcher->poll_exits()) {
          rpc->report_worker_death(e.name, "worker process " + e.describe());
          std::lock_guard<std::mutex> lock(exits_mu);
          exits.push_back(e);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
    });
    rpc->wait_for_workers(ids, options.startup_timeout, [this]() -> std::string {
      if (interrupt_requested()) return "interrupted by the user (Ctrl-C) while workers started";
      std::lock_guard<std::mutex> lock(exits_mu);
      if (exits.empty()) return "";
      auto& e = exits.front();
      return "worker " + e.name + " " + e.describe() + " during start-up; its log:\n" +
             launcher->log_tail(e.name, 2000);
    });
    event("info", "started " + std::to_string(ids.size()) + " worker processes; logs in " + log_dir);
  }

  void init_models() {
    for (auto& [name, model] : exp.models) {
      const PoolSpec& pool = exp.pools.at(model.pool);
      Mesh mesh{model.parallel.dp, model.parallel.pp, model.parallel.tp};
      if (mesh.world() != pool.workers)
        throw std::runtime_error("model '" + name + "': dp*pp*tp = " + std::to_string(mesh.world()) +
                                 " but pool '" + pool.name + "' has " + std::to_string(pool.workers) +
                                 " workers");
      auto group = std::make_unique<WorkerGroup>(*rpc, name, model.role, model.pool, mesh);
      group->init(model.config);
      groups[name] = std::move(group);
    }
    for (auto& [name, spec] : exp.rewards) {
      if (!options.reward_types || !options.reward_types->count(spec.type))
        throw std::runtime_error("reward '" + name + "' has type '" + spec.type +
                                 "', which this controller does not know (types come from rewards/)");
      reward_modules[name] = options.reward_types->at(spec.type).create(spec, exp, *options.reward_types);
    }
  }

  // Node completions, so run_graph wakes when a node finishes instead of
  // polling (a poll interval cost up to its length per node, ~0.3 ms a
  // node on a 2-core machine). A node's thread posts its index as its last
  // act; the future is ready a moment later.
  struct Finished {
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
  };
  // Posts on scope exit, also when the node throws: the first thing a
  // node's thread makes, so the last thing it does.
  struct PostWhenDone {
    Finished* finished;
    size_t node;
    ~PostWhenDone() { finished->post(node); }
  };

  // Starts one node (index `index` of its graph); the future yields its
  // output ports (node_ports.h names them back by column), and `finished`
  // hears of it when it is about to be ready.
  std::future<Batch> start_node(const NodeSpec& node, const Batch& state, int64_t step, Finished& finished,
                                size_t index) {
    Batch input = port_inputs(node, state);  // the callee sees its ports, not the graph's columns
    WantedPorts wanted(wanted_out_ports(node));
    if (node.target == "builtin") {
      auto fn_it = builtin_nodes().find(node.method);
      if (fn_it == builtin_nodes().end()) throw std::runtime_error("unknown builtin '" + node.method + "'");
      BuiltinFn fn = fn_it->second.fn;
      nlohmann::json& state = node_state[node.id];  // a node runs at most once at a time
      return std::async(std::launch::async, [this, fn, input = std::move(input), wanted = std::move(wanted),
                                             &node, &state, step, &finished, index]() {
        PostWhenDone done{&finished, index};
        BuiltinContext ctx{step, settings.trainer, wanted, state, node.args};
        return fn(input, ctx);
      });
    }
    if (auto r = reward_modules.find(node.target); r != reward_modules.end()) {
      RewardModule* module = r->second.get();
      return std::async(std::launch::async, [module, input = std::move(input), wanted = std::move(wanted),
                                             &node, step, &finished, index]() {
        PostWhenDone done{&finished, index};
        RewardCallContext ctx{step, node.id, wanted};
        return module->call(node.method, input, ctx);
      });
    }
    auto g = groups.find(node.target);
    if (g == groups.end())
      throw std::runtime_error("node '" + node.id + "' calls unknown model '" + node.target + "'");
    // The output ports the node binds travel with the call (CallContext::out).
    nlohmann::json context = {{"run", run_id}, {"step", step}, {"node", node.id}, {"out", *wanted.named()}};
    auto group_future = g->second->call(node.method, input, context, node.args);
    return std::async(std::launch::async, [f = std::move(group_future), &finished, index]() mutable {
      PostWhenDone done{&finished, index};
      return f.get().merged;
    });
  }

  // The task's batch for one step of a phase.
  Batch task_batch(const tasks::TaskDraw& draw) {
    return tasks::task_sources().at(settings.task.name).make(settings.task, draw, exp.seed);
  }
  // An RL step: the task's batch of the training split.
  tasks::TaskDraw rl_draw(int64_t step) const {
    return {step, false, settings.task.batch_size, settings.task.samples_per_prompt};
  }

  StepReport run_step(int64_t step) {
    auto step_start = Clock::now();
    StepReport report = run_graph(exp.nodes, task_batch(rl_draw(step)), step);
    report.seconds = std::chrono::duration<double>(Clock::now() - step_start).count();
    report.metrics["perf/time_per_step"] = report.seconds;
    // Tokens through the step's models per second: the sums of the token
    // masks (trainer.token_masks; by default prompt + response).
    double tokens = 0;
    for (const auto& col : settings.trainer.token_masks)
      if (report.batch.has_tensor(col)) tokens += report.batch.tensor(col).sum().item<double>();
    if (tokens > 0) report.metrics["perf/throughput"] = tokens / report.seconds;
    return report;
  }

  // Runs `nodes` once over `state`: every node whose inputs exist starts at
  // once; each one's outputs join the state as it finishes.
  StepReport run_graph(const std::vector<NodeSpec>& nodes, Batch state, int64_t step) {
    StepReport report;
    report.step = step;
    struct Running {
      std::future<Batch> future;
      double start;
    };
    Finished finished;  // before `running`: the futures' destructors wait for the threads that post here
    std::map<size_t, Running> running;
    std::set<size_t> done;
    while (done.size() < nodes.size()) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (done.count(i) || running.count(i)) continue;
        bool ready = true;
        for (auto& col : nodes[i].in) ready = ready && state.has(col);
        if (ready) running[i] = {start_node(nodes[i], state, step, finished, i), since_start()};
      }
      if (running.empty())
        throw std::runtime_error("graph is stuck: no node can start (a column is never produced)");
      // Wait for any node to finish; wake every 50 ms so Ctrl-C is noticed.
      bool progressed = false;
      while (!progressed) {
        if (interrupt_requested()) throw Interrupted();
        std::vector<size_t> ended;
        {
          std::unique_lock<std::mutex> lock(finished.mu);
          finished.cv.wait_for(lock, std::chrono::milliseconds(50), [&] { return !finished.nodes.empty(); });
          ended.assign(finished.nodes.begin(), finished.nodes.end());
          finished.nodes.clear();
        }
        for (size_t index : ended) {
          auto it = running.find(index);
          auto& node = nodes[it->first];
          auto& f = it->second.future;
          Batch out;
          try {
            out = f.get();
          } catch (...) {
            throw std::runtime_error("node '" + node.id + "' (" + node.call +
                                     ") failed: " + describe_exception(std::current_exception()));
          }
          double end = since_start();
          report.spans.push_back({node.id, it->second.start, end});
          report.metrics["timing_s/" + node.id] = end - it->second.start;
          // Worker methods report their own compute time (rank 0's reply).
          if (out.meta().contains("compute_s") && out.meta()["compute_s"].is_number())
            report.metrics["compute_s/" + node.id] = out.meta()["compute_s"].get<double>();
          if (out.meta().contains("metrics"))
            for (auto& [k, v] : out.meta()["metrics"].items())
              if (v.is_number()) report.metrics[k] = v.get<double>();
          state.union_with(column_outputs(node, out));  // ports back to the node's columns
          done.insert(it->first);
          running.erase(it);
          progressed = true;
        }
      }
    }
    report.batch = std::move(state);
    return report;
  }

  WorkerGroup& group_named(const std::string& model, const std::string& where) {
    auto g = groups.find(model);
    if (g == groups.end())
      throw std::runtime_error(where + " names model '" + model + "', which the graph does not have");
    return *g->second;
  }

  // <checkpoint_dir>/run-<id>-<start time>-<pid>/<name>: unique even when
  // two runs with different tracking DBs (same run id) run at once.
  std::string checkpoint_path(const std::string& name) {
    if (run_folder.empty()) {
      char stamp[32];
      std::time_t now = std::time(nullptr);
      std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", std::localtime(&now));
      run_folder = "run-" + std::to_string(run_id) + "-" + stamp + "-" + std::to_string(getpid());
    }
    auto dir = std::filesystem::absolute(options.checkpoint_dir) / run_folder / name;
    return dir.lexically_normal().string();
  }

  void log_metrics(const std::map<std::string, double>& metrics, int64_t step,
                   const std::string& prefix = "") {
    if (!tracking) return;
    for (auto& [k, v] : metrics) tracking->log_metric(run_id, prefix + k, step, v);
  }

  // trainer.warm_start: supervised steps before RL (SFT), then the trained
  // weights are copied into the models that start from them (reference,
  // critic) through a checkpoint directory.
  void warm_start() {
    const auto& ws = settings.trainer.warm_start;
    if (!ws.enabled) return;
    const int64_t steps = ws.steps;
    auto t_start = Clock::now();
    for (int64_t s = 1; s <= steps; ++s) {
      // Warm start and evaluation take one sample per prompt.
      StepReport r = run_graph(
          warm_start_nodes, task_batch({s, false, ws.batch_size.value_or(settings.task.batch_size), 1}), s);
      log_metrics(r.metrics, s, "warm_start/");
      if (options.print_progress && (s == steps || s % std::max<int64_t>(1, steps / 10) == 0)) {
        double elapsed = std::chrono::duration<double>(Clock::now() - t_start).count();
        std::fprintf(stderr, "[rlwb] warm start %lld/%lld", static_cast<long long>(s),
                     static_cast<long long>(steps));
        for (auto& [k, v] : r.metrics)
          if (k.rfind("timing_s/", 0) != 0) std::fprintf(stderr, "  %s=%.4g", k.c_str(), v);
        std::fprintf(stderr, "  (%.0f s)\n", elapsed);
      }
    }
    if (ws.sync_from.empty()) return;
    const std::string& from = ws.sync_from;
    std::string dir = checkpoint_path(from + "-warm-start");
    group_named(from, "trainer.warm_start.sync.from")
        .call("save_checkpoint", Batch{}, {}, {{"dir", dir}})
        .get();
    if (tracking) tracking->log_artifact(run_id, "checkpoint", dir);
    for (auto& to : ws.sync_to)
      group_named(to, "trainer.warm_start.sync.to")
          .call("load_checkpoint", Batch{}, {}, {{"dir", dir}})
          .get();
    event("info", "warm start done after " + std::to_string(steps) + " steps; " + from + " saved to " + dir);
  }

  // trainer.eval: the eval nodes over the task's test split; the score
  // column's row sums, averaged, are val/score/mean.
  std::optional<EvalReport> evaluate(int64_t step) {
    if (eval_nodes.empty()) return std::nullopt;
    const auto& ev = settings.trainer.eval;
    StepReport r = run_graph(
        eval_nodes, task_batch({step, true, ev.batch_size.value_or(settings.task.test_size()), 1}), step);
    const std::string& col = ev.score;
    if (!r.batch.has_tensor(col))
      throw std::runtime_error("trainer.eval.score names column '" + col +
                               "', which the eval nodes do not produce");
    torch::Tensor scores = r.batch.tensor(col).to(torch::kFloat64);
    if (scores.dim() == 2) scores = scores.sum(1);
    EvalReport report{step, scores.mean().item<double>(), scores.size(0)};
    std::map<std::string, double> metrics = {{"val/score/mean", report.score}};
    for (auto& [k, v] : r.metrics)
      if (k.rfind("timing_s/", 0) == 0) metrics["val/" + k] = v;
    log_metrics(metrics, step);
    if (options.print_progress)
      std::fprintf(stderr, "[rlwb] eval at step %lld: held-out score %.3f over %lld rows\n",
                   static_cast<long long>(step), report.score, static_cast<long long>(report.rows));
    return report;
  }

  // trainer.samples: the first rows of a step, for the samples view.
  void log_samples(const StepReport& r) {
    const auto& cfg = settings.trainer.samples;
    if (!tracking || !cfg.enabled) return;
    const Batch& b = r.batch;
    const std::string &prompt = cfg.prompt, &response = cfg.response, &score = cfg.score;
    if (!b.has(prompt) || !b.has(response)) return;
    auto prompts = b.objects(prompt);
    auto responses = b.objects(response);
    torch::Tensor scores;
    if (b.has_tensor(score)) {
      scores = b.tensor(score).to(torch::kFloat64);
      if (scores.dim() == 2) scores = scores.sum(1);
    }
    int64_t rows = std::min<int64_t>(cfg.rows, static_cast<int64_t>(prompts.size()));
    for (int64_t i = 0; i < rows; ++i) {
      nlohmann::json details = nlohmann::json::object();
      for (auto& col : cfg.details)
        if (b.has_objects(col)) details[col] = b.objects(col)[i];
      auto text = [](const nlohmann::json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
      tracking->log_sample(run_id, r.step, text(prompts[i]), text(responses[i]),
                           scores.defined() ? scores[i].item<double>() : 0.0, details);
    }
  }

  // trainer.save: final checkpoints (HF layout) of the named models.
  std::map<std::string, std::string> save_models() {
    std::map<std::string, std::string> saved;
    for (auto& name : settings.trainer.save) {
      std::string dir = checkpoint_path(name);
      group_named(name, "trainer.save").call("save_checkpoint", Batch{}, {}, {{"dir", dir}}).get();
      if (tracking) tracking->log_artifact(run_id, "checkpoint", dir);
      saved[name] = dir;
    }
    return saved;
  }

  void shutdown() {
    if (rpc) rpc->shutdown_workers();
    if (launcher) {
      // Give workers a moment to leave on their own, then stop the rest.
      auto deadline = Clock::now() + std::chrono::milliseconds(1500);
      while (!launcher->live_pids().empty() && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      monitor_stop = true;
      if (monitor.joinable()) monitor.join();
      launcher->stop_all();
    }
    monitor_stop = true;
    if (monitor.joinable()) monitor.join();
    groups.clear();
    rpc.reset();
    if (!ipc_path.empty()) std::filesystem::remove(ipc_path);
  }
};

Controller::Controller(Experiment experiment, ControllerOptions options, TrackingWriter* tracking)
    : impl_(new Impl) {
  impl_->exp = std::move(experiment);
  impl_->options = std::move(options);
  impl_->tracking = tracking;
}

Controller::~Controller() { impl_->shutdown(); }

RunResult Controller::run() {
  Impl& m = *impl_;
  RunResult result;
  if (m.tracking) {
    m.run_id = m.tracking->start_run(m.options.run_name.empty() ? m.exp.name : m.options.run_name, m.exp.file,
                                     m.exp.text, m.exp.algorithm, m.exp.seed, m.exp.raw);
  }
  result.run_id = m.run_id;
  try {
    // The loader read them and the validator checked them.
    if (auto p = m.exp.phase_nodes.find("warm_start"); p != m.exp.phase_nodes.end())
      m.warm_start_nodes = p->second;
    if (auto p = m.exp.phase_nodes.find("eval"); p != m.exp.phase_nodes.end()) m.eval_nodes = p->second;
    m.settings = config::parse_experiment_options(m.exp);  // throws before any worker starts
    m.start_workers();
    m.init_models();
    m.warm_start();
    const int64_t steps = m.settings.trainer.steps;
    const int64_t eval_every = m.settings.trainer.eval.every;
    if (auto e = m.evaluate(0)) result.evals.push_back(*e);
    ProgressLine progress(steps, m.options.print_progress);
    for (int64_t step = 1; step <= steps; ++step) {
      StepReport report = m.run_step(step);
      m.log_metrics(report.metrics, step);
      m.log_samples(report);
      if (eval_every > 0 && (step % eval_every == 0 || step == steps))
        if (auto e = m.evaluate(step)) result.evals.push_back(*e);
      progress.print(report,
                     result.evals.empty() ? std::nullopt : std::optional<double>(result.evals.back().score));
      if (on_step) on_step(report);
      result.steps.push_back(std::move(report));
    }
    result.checkpoints = m.save_models();
    result.status = "finished";
  } catch (const Interrupted& e) {
    result.status = "interrupted";
    result.error = e.what();
  } catch (const std::exception& e) {
    result.status = "failed";
    result.error = e.what();
  }
  m.shutdown();
  // end_run records the error (if any) as an event with the final status.
  if (m.tracking) m.tracking->end_run(m.run_id, result.status, result.error);
  return result;
}

}  // namespace rlwb::core
