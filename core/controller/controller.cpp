#include "core/controller/controller.h"

#include "core/controller/builtins.h"
#include "core/launch/local_launcher.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
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

}  // namespace

struct Controller::Impl {
  Experiment exp;
  ControllerOptions options;
  TrackingWriter* tracking = nullptr;
  int64_t run_id = 0;
  Clock::time_point t0 = Clock::now();

  std::unique_ptr<LocalLauncher> launcher;
  std::unique_ptr<RpcServer> rpc;
  std::map<std::string, std::unique_ptr<WorkerGroup>> groups;  // by model name
  std::string ipc_path;

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
      ipc_path = "/tmp/rlwb-" + std::to_string(getpid()) + "-" + std::to_string(reinterpret_cast<uintptr_t>(this) & 0xffffff) + ".sock";
      address = "ipc://" + ipc_path;
      options.rpc.wire.shm_threshold_bytes = options.rpc.wire.shm_threshold_bytes ? options.rpc.wire.shm_threshold_bytes : (1u << 20);
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
        spec.argv = {options.worker_binary, "--controller", rpc->address(), "--group", name,
                     "--rank", std::to_string(r), "--world", std::to_string(pool.workers),
                     "--device", pool.device, "--store", "127.0.0.1:" + std::to_string(port),
                     "--shm-threshold", std::to_string(options.rpc.wire.shm_threshold_bytes)};
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
      return "worker " + e.name + " " + e.describe() + " during start-up; its log:\n" + launcher->log_tail(e.name, 2000);
    });
    event("info", "started " + std::to_string(ids.size()) + " worker processes; logs in " + log_dir);
  }

  void init_models() {
    for (auto& [name, model] : exp.models) {
      const PoolSpec& pool = exp.pools.at(model.pool);
      Mesh mesh{model.parallel.dp, model.parallel.pp, model.parallel.tp};
      if (mesh.world() != pool.workers)
        throw std::runtime_error("model '" + name + "': dp*pp*tp = " + std::to_string(mesh.world()) +
                                 " but pool '" + pool.name + "' has " + std::to_string(pool.workers) + " workers");
      auto group = std::make_unique<WorkerGroup>(*rpc, name, model.role, model.pool, mesh);
      group->init(model.config);
      groups[name] = std::move(group);
    }
  }

  // Starts one node; the future yields its output columns.
  std::future<Batch> start_node(const NodeSpec& node, const Batch& state, int64_t step) {
    Batch input = state.select(node.in);
    if (node.target == "builtin") {
      auto fn_it = builtin_nodes().find(node.method);
      if (fn_it == builtin_nodes().end()) throw std::runtime_error("unknown builtin '" + node.method + "'");
      BuiltinFn fn = fn_it->second;
      return std::async(std::launch::async, [this, fn, input = std::move(input), &node, step]() {
        BuiltinContext ctx{step, exp.trainer, node.in, node.out};
        return fn(input, ctx);
      });
    }
    auto g = groups.find(node.target);
    if (g == groups.end()) throw std::runtime_error("node '" + node.id + "' calls unknown model '" + node.target + "'");
    // The node's column names travel with the call so a method can serve any names.
    nlohmann::json context = {{"run", run_id}, {"step", step}, {"node", node.id}, {"in", node.in}, {"out", node.out}};
    auto group_future = g->second->call(node.method, input, context);
    return std::async(std::launch::async, [f = std::move(group_future)]() mutable { return f.get().merged; });
  }

  StepReport run_step(int64_t step) {
    StepReport report;
    report.step = step;
    auto step_start = Clock::now();
    const auto& task = task_sources().at(exp.task.value("name", std::string()));
    Batch state = task.make(step, exp.task, exp.seed);

    struct Running {
      std::future<Batch> future;
      double start;
    };
    std::map<size_t, Running> running;
    std::set<size_t> done;
    const auto& nodes = exp.nodes;
    while (done.size() < nodes.size()) {
      for (size_t i = 0; i < nodes.size(); ++i) {
        if (done.count(i) || running.count(i)) continue;
        bool ready = true;
        for (auto& col : nodes[i].in) ready = ready && state.has(col);
        if (ready) running[i] = {start_node(nodes[i], state, step), since_start()};
      }
      if (running.empty())
        throw std::runtime_error("graph is stuck: no node can start (a column is never produced)");
      // Wait for any node to finish; poll so Ctrl-C is noticed.
      bool progressed = false;
      while (!progressed) {
        if (interrupt_requested()) throw Interrupted();
        for (auto it = running.begin(); it != running.end();) {
          auto& node = nodes[it->first];
          auto& f = it->second.future;
          if (f.wait_for(std::chrono::milliseconds(0)) == std::future_status::timeout) {
            ++it;
            continue;
          }
          Batch out;
          try {
            out = f.get();
          } catch (...) {
            throw std::runtime_error("node '" + node.id + "' (" + node.call + ") failed: " +
                                     describe_exception(std::current_exception()));
          }
          double end = since_start();
          report.spans.push_back({node.id, it->second.start, end});
          report.metrics["timing_s/" + node.id] = end - it->second.start;
          if (out.meta().contains("metrics"))
            for (auto& [k, v] : out.meta()["metrics"].items())
              if (v.is_number()) report.metrics[k] = v.get<double>();
          for (auto& col : node.out)
            if (!out.has(col))
              throw std::runtime_error("node '" + node.id + "' (" + node.call + ") did not return its output column '" +
                                       col + "'; it returned: " + join(out.column_names()));
          Batch produced = out.select(node.out);
          produced.meta() = nlohmann::json::object();
          state.union_with(produced);
          done.insert(it->first);
          it = running.erase(it);
          progressed = true;
        }
        if (!progressed) std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    report.seconds = std::chrono::duration<double>(Clock::now() - step_start).count();
    report.metrics["perf/time_per_step"] = report.seconds;
    report.batch = std::move(state);
    return report;
  }

  static std::string join(const std::vector<std::string>& names) {
    std::string s;
    for (auto& n : names) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "(nothing)" : s;
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
    m.start_workers();
    m.init_models();
    const int64_t steps = m.exp.steps();
    for (int64_t step = 1; step <= steps; ++step) {
      StepReport report = m.run_step(step);
      if (m.tracking)
        for (auto& [k, v] : report.metrics) m.tracking->log_metric(m.run_id, k, step, v);
      if (m.options.print_progress) {
        std::fprintf(stderr, "[rlwb] step %lld/%lld  %.3f s", static_cast<long long>(step),
                     static_cast<long long>(steps), report.seconds);
        for (auto& [k, v] : report.metrics)
          if (k.rfind("timing_s/", 0) != 0 && k != "perf/time_per_step") std::fprintf(stderr, "  %s=%.4g", k.c_str(), v);
        std::fprintf(stderr, "\n");
      }
      if (on_step) on_step(report);
      result.steps.push_back(std::move(report));
    }
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
