#include "core/controller/worker_cluster.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>

namespace rlwb::core {
namespace {

using Clock = std::chrono::steady_clock;

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

// Unique per process and cluster, short enough for a socket path.
std::string ipc_socket_path() {
  static std::atomic<int> counter{0};
  return "/tmp/rlwb-" + std::to_string(getpid()) + "-" + std::to_string(counter++) + ".sock";
}

}  // namespace

WorkerCluster::WorkerCluster(const std::vector<ClusterPool>& pools, ClusterOptions options)
    : options_(std::move(options)) {
  std::string address = "tcp://127.0.0.1:0";
  if (options_.transport == "ipc") {
    ipc_path_ = ipc_socket_path();
    address = "ipc://" + ipc_path_;
  } else if (options_.transport != "tcp") {
    throw std::runtime_error("unknown transport '" + options_.transport + "' (use ipc or tcp)");
  }
  rpc_ = std::make_unique<RpcServer>(address, options_.rpc);
  launcher_ = std::make_unique<LocalLauncher>(options_.log_dir);
  try {
    std::vector<std::string> ids;
    for (const auto& pool : pools) {
      int port = free_tcp_port();
      for (int r = 0; r < pool.workers; ++r) {
        ProcessSpec spec;
        spec.name = worker_id(pool.name, r);
        spec.argv = {options_.worker_binary,
                     "--controller",
                     rpc_->address(),
                     "--group",
                     pool.name,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(pool.workers),
                     "--device",
                     pool.device,
                     "--store",
                     "127.0.0.1:" + std::to_string(port),
                     "--shm-threshold",
                     std::to_string(options_.rpc.wire.shm_threshold_bytes)};
        // Each worker gets one thread per core share, so a pool of N on a
        // small machine doesn't oversubscribe it N times.
        spec.env["OMP_NUM_THREADS"] = "1";
        pids_.emplace_back(spec.name, launcher_->start(spec));
        ids.push_back(spec.name);
      }
    }
    if (options_.watch_exits) watcher_ = std::thread([this] { watch(); });
    rpc_->wait_for_workers(ids, options_.startup_timeout, [this] { return startup_failure(); });
  } catch (...) {
    stop();
    throw;
  }
}

WorkerCluster::~WorkerCluster() { stop(); }

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
      rpc_->report_worker_death(e.name, "worker process " + e.describe());
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
  return "worker " + e.name + " " + e.describe() + " during start-up; its log:\n" +
         launcher_->log_tail(e.name, 2000);
}

void WorkerCluster::stop() {
  if (!rpc_) return;
  rpc_->shutdown_workers();
  // Give workers a moment to leave on their own, then stop the rest.
  auto deadline = Clock::now() + std::chrono::milliseconds(1500);
  while (!launcher_->live_pids().empty() && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  watch_stop_ = true;
  if (watcher_.joinable()) watcher_.join();
  launcher_->stop_all();
  rpc_.reset();
  if (!ipc_path_.empty()) std::filesystem::remove(ipc_path_);
}

}  // namespace rlwb::core
