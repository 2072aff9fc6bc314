#include "core/controller/worker_cluster.h"

#include "core/launch/slurm.h"

#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>

namespace rlwb::core {
namespace {

using Clock = std::chrono::steady_clock;

// Unique per process and cluster, short enough for a socket path.
std::string ipc_socket_path() {
  static std::atomic<int> counter{0};
  return "/tmp/rlwb-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".sock";
}

// "tcp://0.0.0.0:5555" with host "10.0.0.1" -> "tcp://10.0.0.1:5555".
std::string with_host(const std::string& endpoint, const std::string& host) {
  auto scheme = endpoint.find("://");
  auto colon = endpoint.rfind(':');
  if (scheme == std::string::npos || colon == std::string::npos || colon <= scheme + 2) return endpoint;
  return endpoint.substr(0, scheme + 3) + host + endpoint.substr(colon);
}

// Unique per controller process and cluster: Slurm finds the job by it.
std::string slurm_job_name(const std::string& pool) {
  static std::atomic<int> counter{0};
  return "rlwb-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + "-" + pool;
}

}  // namespace

// Why a pool's srun ended, in Slurm's words where it has them: the job's
// state and reason, and srun's last line ("*** STEP 12.0 ON node1
// CANCELLED AT ... DUE TO TIME LIMIT ***").
std::string WorkerCluster::slurm_end(const Process& process, const ProcessExit& exit) const {
  std::string why = "Slurm job " + process.slurm_job;
  if (std::string id = slurm_job_id(process.slurm_job); !id.empty()) {
    why += " (id " + id + ")";
    if (std::string state = slurm_job_state(id); !state.empty()) why += " ended " + state;
  }
  why += "; srun " + exit.describe();
  std::string tail = launcher_->log_tail(exit.name, 400);
  if (auto at = tail.find("***"); at != std::string::npos) {
    auto end = tail.find('\n', at);
    why += ": " + tail.substr(at, end == std::string::npos ? std::string::npos : end - at);
  }
  return why;
}

// One c10d TCPStore server per pool, in the controller: its ranks, on any
// host, dial one address known before they start, and no port is picked
// free and then raced for. The servers listen on every interface.
struct PoolStores {
  std::map<std::string, c10::intrusive_ptr<c10d::TCPStore>> by_pool;

  int serve(const std::string& pool, int workers, std::chrono::milliseconds timeout) {
    if (by_pool.count(pool)) throw std::logic_error("a c10d store named '" + pool + "' is served already");
    c10d::TCPStoreOptions options;
    options.port = 0;  // the kernel picks; getPort() tells
    options.isServer = true;
    options.numWorkers = workers + 1;  // the ranks and this client
    options.waitWorkers = false;
    options.timeout = timeout;
    try {
      auto store = c10::make_intrusive<c10d::TCPStore>("127.0.0.1", options);
      by_pool[pool] = store;
      return store->getPort();
    } catch (const std::exception& e) {
      throw std::runtime_error("cannot serve the c10d store of pool '" + pool + "': " + e.what());
    }
  }
};

WorkerCluster::WorkerCluster(const std::vector<ClusterPool>& pools, ClusterOptions options)
    : options_(std::move(options)) {
  const config::LaunchOptions& launch = options_.launch;
  const bool slurm = launch.target == config::LaunchTarget::kSlurm;
  // Workers elsewhere (or in Slurm's hands) dial over TCP the address the
  // launch file gives.
  const bool remote = slurm || launch.spans_hosts() || launch.bind_host() != "127.0.0.1";
  std::string address = "tcp://127.0.0.1:0";
  std::string advertised = "127.0.0.1";
  if (remote) {
    options_.transport = "tcp";
    address = "tcp://" + launch.bind_host() + ":" + std::to_string(launch.bind_port());
    advertised = launch.advertised_host();
    if (advertised.empty())
      throw std::runtime_error("launch: bind " + launch.bind +
                               " is a wildcard; set advertise: to the address workers dial");
  } else if (options_.transport == "ipc") {
    ipc_path_ = ipc_socket_path();
    address = "ipc://" + ipc_path_;
  } else if (options_.transport != "tcp") {
    throw std::runtime_error("unknown transport '" + options_.transport + "' (use ipc or tcp)");
  }
  advertised_ = advertised;
  stores_ = std::make_unique<PoolStores>();
  rpc_ = std::make_unique<RpcServer>(address, options_.rpc);
  const std::string controller = remote ? with_host(rpc_->address(), advertised) : rpc_->address();
  launcher_ = std::make_unique<LocalLauncher>(options_.log_dir);
  try {
    std::vector<std::string> ids;
    for (const auto& pool : pools) {
      int port = stores_->serve(pool.name, pool.workers, options_.startup_timeout);
      // The worker's command line but its rank.
      const std::vector<std::string> worker = {options_.worker_binary,
                                               "--controller",
                                               controller,
                                               "--group",
                                               pool.name,
                                               "--world",
                                               std::to_string(pool.workers),
                                               "--device",
                                               pool.device,
                                               "--store",
                                               advertised + ":" + std::to_string(port),
                                               "--join-store",
                                               "--shm-threshold",
                                               std::to_string(options_.rpc.wire.shm_threshold_bytes)};
      std::vector<std::string> ranks;
      for (int r = 0; r < pool.workers; ++r) ranks.push_back(worker_id(pool.name, r));
      if (slurm) {
        // One srun for the pool's ranks: one process here, one log, one
        // exit that ends every rank (core/launch/slurm.h).
        ProcessSpec spec;
        spec.name = pool.name + "/slurm";
        const std::string job = slurm_job_name(pool.name);
        spec.argv = srun_command(launch.slurm, job, pool.workers, pool.threads, worker);
        pid_t pid = launcher_->start(spec);
        for (const auto& id : ranks) pids_.emplace_back(id, pid);
        processes_[spec.name] = {ranks, job};
      } else {
        for (int r = 0; r < pool.workers; ++r) {
          ProcessSpec spec;
          spec.name = ranks[r];
          // A rank on another host starts through that host's exec prefix;
          // `env` carries the thread count where the environment may not.
          spec.argv = launch.exec_of(pool.name, r);
          const std::string threads = std::to_string(pool.threads);
          if (!spec.argv.empty()) spec.argv.insert(spec.argv.end(), {"env", "OMP_NUM_THREADS=" + threads});
          spec.argv.insert(spec.argv.end(), worker.begin(), worker.end());
          spec.argv.insert(spec.argv.end(), {"--rank", std::to_string(r)});
          // The pool's threads per worker (default 1: a pool of N on a
          // small machine doesn't oversubscribe it N times). LibTorch sizes
          // its intra-op pool from OMP_NUM_THREADS.
          spec.env["OMP_NUM_THREADS"] = threads;
          pids_.emplace_back(spec.name, launcher_->start(spec));
          processes_[spec.name] = {{spec.name}, ""};
        }
      }
      ids.insert(ids.end(), ranks.begin(), ranks.end());
    }
    if (options_.watch_exits) watcher_ = std::thread([this] { watch(); });
    rpc_->wait_for_workers(ids, options_.startup_timeout, [this] { return startup_failure(); });
  } catch (...) {
    stop();
    throw;
  }
}

WorkerCluster::~WorkerCluster() { stop(); }

std::string WorkerCluster::serve_store(const std::string& name, int ranks) {
  // "link:" keeps the name apart from the pools' (a pool may be called anything).
  const int port = stores_->serve("link:" + name, ranks, options_.startup_timeout);
  return advertised_ + ":" + std::to_string(port);
}

pid_t WorkerCluster::pid(const std::string& worker) const {
  for (auto& [name, pid] : pids_)
    if (name == worker) return pid;
  throw std::out_of_range("no worker '" + worker + "' in this cluster");
}

// The launcher learns of an exit by reaping; a sleep of 20 ms between
// looks bounds how late the RPC hears of it.
void WorkerCluster::watch() {
  while (!watch_stop_) {
    for (auto& e : launcher_->poll_exits()) {
      const Process& process = processes_.at(e.name);
      std::string why = "worker process " + e.describe();
      if (!process.slurm_job.empty()) why = slurm_end(process, e);
      for (const auto& rank : process.ranks) rpc_->report_worker_death(rank, why);
      std::lock_guard<std::mutex> lock(exits_mu_);
      exits_.push_back(e);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// Why start-up must end now ("" to go on waiting).
std::string WorkerCluster::startup_failure() {
  if (options_.stop.stop_requested()) return "stopped (Ctrl-C) while the workers started";
  std::lock_guard<std::mutex> lock(exits_mu_);
  if (exits_.empty()) return "";
  const auto& e = exits_.front();
  const Process& process = processes_.at(e.name);
  std::string what =
      process.slurm_job.empty() ? "worker " + e.name + " " + e.describe() : slurm_end(process, e);
  return what + " during start-up; its log:\n" + launcher_->log_tail(e.name, 2000);
}

void WorkerCluster::stop() {
  if (!rpc_) return;
  rpc_->shutdown_workers();
  // Give workers a moment to leave on their own, then stop the rest.
  auto deadline = Clock::now() + std::chrono::milliseconds(1500);
  while (!launcher_->live_pids().empty() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // A Slurm job is cancelled through Slurm, whatever srun does with the
  // signals below: no allocation outlives the run.
  if (!launcher_->live_pids().empty())
    for (const auto& [name, process] : processes_)
      if (!process.slurm_job.empty()) cancel_slurm_job(process.slurm_job);
  watch_stop_ = true;
  if (watcher_.joinable()) watcher_.join();
  launcher_->stop_all();
  rpc_.reset();
  stores_.reset();
  if (!ipc_path_.empty()) std::filesystem::remove(ipc_path_);
}

}  // namespace rlwb::core
