// The worker processes of a run: for each resource pool, its rlwb-worker
// processes (core/launch; on this machine, or on the hosts the launch file
// places them, through each host's exec prefix), the controller's RPC
// endpoint they dial, each pool's c10d store (served here, so that ranks on
// any host dial one known address), and a watcher that reports a process
// that exits to the RPC at once (its pending calls then fail with the exit,
// not after a heartbeat deadline). Start-up is bounded: every worker registers within
// startup_timeout, or the constructor throws with the first dead worker's
// log, or because a stop was requested. Nothing outlives the object: the
// destructor asks the workers to leave, then stops the rest.
// Used by the Controller and by the tests' LocalCluster.
#pragma once

#include "core/config/launch_options.h"
#include "core/launch/local_launcher.h"
#include "core/rpc/rpc_server.h"

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

namespace rlwb::core {

struct ClusterPool {
  std::string name;
  int workers = 1;
  std::string device = "cpu";
  int threads = 1;  // each worker's intra-op threads (OMP_NUM_THREADS)
};

struct ClusterOptions {
  std::string worker_binary;      // path of rlwb-worker
  std::string transport = "ipc";  // "ipc" (one host) or "tcp"; tcp whenever launch binds elsewhere
  config::LaunchOptions launch;   // bind address and the hosts of the ranks
  RpcOptions rpc;                 // rpc.wire.shm_threshold_bytes reaches the workers too
  std::string log_dir;            // one log file per worker
  std::chrono::milliseconds startup_timeout{60000};
  // Report a worker's exit to the RPC as it happens. Off only for tests
  // that check the RPC's own detection (missing heartbeats).
  bool watch_exits = true;
  std::stop_token stop;  // a stop requested during start-up ends it
};

struct PoolStores;  // the pools' c10d stores (worker_cluster.cpp)

class WorkerCluster {
 public:
  WorkerCluster(const std::vector<ClusterPool>& pools, ClusterOptions options);
  ~WorkerCluster();  // stop()
  WorkerCluster(const WorkerCluster&) = delete;
  WorkerCluster& operator=(const WorkerCluster&) = delete;

  RpcServer& rpc() { return *rpc_; }
  LocalLauncher& launcher() { return *launcher_; }
  const std::string& log_dir() const { return options_.log_dir; }
  int worker_count() const { return static_cast<int>(pids_.size()); }
  pid_t pid(const std::string& worker) const;

  // A c10d store for ranks of several pools (a weight link between an
  // actor and a rollout model, weight_links.h), served here as the pools'
  // are; `ranks` connect to it. Returns the "host:port" they dial. Throws
  // when a store of that name is served already.
  std::string serve_store(const std::string& name, int ranks);

  // Asks the workers to leave, waits a moment, then stops those left. Idempotent.
  void stop();

 private:
  // A process the launcher started: one rank, or (Slurm) a pool's srun.
  struct Process {
    std::vector<std::string> ranks;  // the worker ids it runs
    std::string slurm_job;           // the Slurm job's name; "" when local
  };
  void watch();
  std::string startup_failure();
  std::string slurm_end(const Process& process, const ProcessExit& exit) const;

  ClusterOptions options_;
  std::string ipc_path_;    // the socket file to remove, for ipc
  std::string advertised_;  // the host the workers dial for the controller's sockets
  std::unique_ptr<PoolStores> stores_;
  std::unique_ptr<RpcServer> rpc_;
  std::unique_ptr<LocalLauncher> launcher_;
  std::vector<std::pair<std::string, pid_t>> pids_;
  std::map<std::string, Process> processes_;  // by the launcher's name

  std::atomic<bool> watch_stop_{false};
  std::thread watcher_;
  std::mutex exits_mu_;
  std::vector<ProcessExit> exits_;
};

}  // namespace rlwb::core
