// Test support: a real local cluster -- an RpcServer on an ipc:// socket
// and rlwb-worker processes (core/controller/worker_cluster.h) -- torn down
// at the end of each test so no process outlives it.
#pragma once

#include "core/controller/worker_cluster.h"
#include "core/launch/local_launcher.h"
#include "core/rpc/worker_group.h"
#include "tests/test_paths.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

namespace rlwb::testing {

inline std::string unique_name(const std::string& stem) {
  static std::atomic<int> counter{0};
  return stem + "-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// A real local cluster for tests: the product's WorkerCluster (worker
// processes dialing an RpcServer) without its exit watcher, so tests see
// the RPC's own failure detection.
class LocalCluster {
 public:
  // pools: name -> number of worker processes.
  explicit LocalCluster(const std::map<std::string, int>& pools, core::RpcOptions options = {},
                        const std::string& transport = "ipc")
      : cluster_(cluster_pools(pools), cluster_options(options, transport)) {}

  core::RpcServer& rpc() { return cluster_.rpc(); }
  core::LocalLauncher& launcher() { return cluster_.launcher(); }
  pid_t pid(const std::string& worker) const { return cluster_.pid(worker); }

  // A model of role "demo" on the pool, initialised.
  std::unique_ptr<core::WorkerGroup> demo_model(const std::string& model, const std::string& pool,
                                                core::Mesh mesh,
                                                nlohmann::json config = nlohmann::json::object(),
                                                std::optional<core::Mesh> generation = std::nullopt) {
    auto group = std::make_unique<core::WorkerGroup>(rpc(), model, "demo", pool, mesh, generation);
    group->init(config);
    return group;
  }

 private:
  static std::vector<core::ClusterPool> cluster_pools(const std::map<std::string, int>& pools) {
    std::vector<core::ClusterPool> out;
    for (auto& [name, n] : pools) out.push_back({name, n, "cpu"});
    return out;
  }
  static core::ClusterOptions cluster_options(const core::RpcOptions& rpc, const std::string& transport) {
    core::ClusterOptions o;
    o.worker_binary = rlwb::testing::kWorkerBin;
    o.transport = transport;
    o.rpc = rpc;
    o.log_dir = (std::filesystem::temp_directory_path() / unique_name("rlwb-test-logs")).string();
    o.startup_timeout = std::chrono::seconds(60);
    o.watch_exits = false;
    return o;
  }

  core::WorkerCluster cluster_;
};

}  // namespace rlwb::testing
