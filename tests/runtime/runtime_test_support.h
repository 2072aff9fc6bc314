// Test support: a real local cluster -- an RpcServer on an ipc:// socket
// and rlwb-worker processes started by the LocalLauncher -- torn down at the
// end of each test so no process outlives it.
#pragma once

#include "core/launch/local_launcher.h"
#include "core/rpc/worker_group.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace rlwb::testing {

inline int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  int port = ntohs(addr.sin_port);
  close(fd);
  return port;
}

inline std::string unique_name(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

class LocalCluster {
 public:
  // pools: name -> number of worker processes.
  explicit LocalCluster(const std::map<std::string, int>& pools, core::RpcOptions options = {},
                        const std::string& transport = "ipc")
      : socket_path_("/tmp/" + unique_name("rlwb-test") + ".sock"),
        rpc_(transport == "ipc" ? "ipc://" + socket_path_ : "tcp://127.0.0.1:0", options),
        launcher_(std::filesystem::temp_directory_path() / unique_name("rlwb-test-logs")) {
    std::vector<std::string> ids;
    for (auto& [pool, n] : pools) {
      int port = free_port();
      for (int r = 0; r < n; ++r) {
        core::ProcessSpec spec;
        spec.name = core::worker_id(pool, r);
        spec.argv = {RLWB_WORKER_BIN,
                     "--controller",
                     rpc_.address(),
                     "--group",
                     pool,
                     "--rank",
                     std::to_string(r),
                     "--world",
                     std::to_string(n),
                     "--store",
                     "127.0.0.1:" + std::to_string(port)};
        spec.env["OMP_NUM_THREADS"] = "1";
        pids_[spec.name] = launcher_.start(spec);
        ids.push_back(spec.name);
      }
    }
    rpc_.wait_for_workers(ids, std::chrono::seconds(60));
  }

  ~LocalCluster() {
    rpc_.shutdown_workers();
    launcher_.stop_all(std::chrono::milliseconds(2000));
    std::filesystem::remove(socket_path_);
  }

  core::RpcServer& rpc() { return rpc_; }
  core::LocalLauncher& launcher() { return launcher_; }
  pid_t pid(const std::string& worker) const { return pids_.at(worker); }

  // A model of role "demo" on the pool, initialised.
  std::unique_ptr<core::WorkerGroup> demo_model(const std::string& model, const std::string& pool,
                                                core::Mesh mesh,
                                                nlohmann::json config = nlohmann::json::object()) {
    auto group = std::make_unique<core::WorkerGroup>(rpc_, model, "demo", pool, mesh);
    group->init(config);
    return group;
  }

 private:
  std::string socket_path_;
  core::RpcServer rpc_;
  core::LocalLauncher launcher_;
  std::map<std::string, pid_t> pids_;
};

}  // namespace rlwb::testing
