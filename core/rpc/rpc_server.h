// The controller's RPC endpoint: one ROUTER socket that every worker
// process dials (DEALER), served by one I/O thread. Callers on any thread
// get a future per call; the I/O thread sends, receives, matches replies to
// requests by id, tracks heartbeats, and fails a pending call when its
// deadline passes or its worker dies -- so no caller waits forever.
// Used by WorkerGroup (dispatch) and the controller.
#pragma once

#include "core/batch/batch.h"
#include "core/rpc/protocol.h"
#include "core/wire/wire.h"

#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <vector>

namespace rlwb::core {

struct RpcOptions {
  // A worker whose heartbeats stop for this long is declared dead and its
  // pending calls fail (workers beat every heartbeat_interval).
  std::chrono::milliseconds dead_after{2000};
  std::chrono::milliseconds heartbeat_interval{200};
  // Default bound of one call; a call may pass its own.
  std::chrono::milliseconds call_timeout{std::chrono::minutes(30)};
  WireOptions wire;  // shm for same-host peers
};

// What a registered worker told us about itself.
struct WorkerInfo {
  std::string id, group, host;
  int rank = 0, world = 1, pid = 0;
  nlohmann::json roles = nlohmann::json::object();  // role -> {method: dispatch}
  nlohmann::json devices = nlohmann::json::array();
  bool alive = true;
  std::string death_reason;
  double seconds_since_heartbeat = 0;
};

class RpcServer {
 public:
  // bind_address: "ipc:///tmp/x.sock", "tcp://127.0.0.1:0" (port chosen), ...
  explicit RpcServer(const std::string& bind_address, RpcOptions options = {});
  ~RpcServer();  // stops the I/O thread; pending calls fail
  RpcServer(const RpcServer&) = delete;
  RpcServer& operator=(const RpcServer&) = delete;

  // The address workers should dial (the resolved one for port 0).
  const std::string& address() const;

  // Blocks until every listed worker has registered, or throws
  // std::runtime_error naming the missing ones after `timeout`.
  // `abort_check` is polled; returning a reason aborts the wait with it.
  void wait_for_workers(const std::vector<std::string>& ids, std::chrono::milliseconds timeout,
                        const std::function<std::string()>& abort_check = {});

  // Sends one call; the future holds the reply Batch or a RemoteError.
  std::future<Batch> call(const std::string& worker, const std::string& model,
                          const std::string& method, Batch input,
                          nlohmann::json args = nlohmann::json::object(),
                          nlohmann::json context = nlohmann::json::object(),
                          std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Marks a worker dead (e.g. the launcher saw its process exit) and fails
  // its pending calls with `reason`.
  void report_worker_death(const std::string& worker, const std::string& reason);

  std::vector<WorkerInfo> workers() const;
  std::optional<WorkerInfo> worker(const std::string& id) const;

  // Asks every live worker to exit (fire and forget).
  void shutdown_workers();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::core
