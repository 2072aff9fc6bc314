// The controller's RPC endpoint: one ROUTER socket that every worker
// process dials (DEALER). Callers on any thread get a ReplyFuture per call.
// A caller sends its request on the socket itself, and the first thread
// that waits for a reply reads the socket while it waits, so a round trip
// costs no hand-off between threads. A background thread reads the socket
// when nobody waits, sends heartbeats, tracks worker liveness and fails a
// pending call when its deadline passes or its worker dies -- so no caller
// waits forever. The socket is shared under a mutex; every thread that
// touches it drains what arrived before letting go (ZMQ_FD is
// edge-triggered). Used by WorkerGroup (dispatch) and the controller.
#pragma once

#include "core/batch/batch.h"
#include "core/rpc/protocol.h"
#include "core/wire/wire.h"

#include <chrono>
#include <functional>
#include <optional>
#include <memory>
#include <string>
#include <vector>

namespace rlwb::core {

struct RpcOptions;
class RpcServer;
namespace rpc_detail {
struct Endpoint;
struct ReplyState;
struct PreparedCall;
}  // namespace rpc_detail

// The reply of one call. get() waits for it and returns the Batch, or
// throws RemoteError (the method failed, timed out, or its worker died).
// Waiting may be done on any thread; it stays valid after the RpcServer is
// destroyed (a call still pending then fails).
class ReplyFuture {
 public:
  ReplyFuture() = default;
  bool valid() const { return state_ != nullptr; }
  Batch get();
  // True when the reply (or its failure) is there within `timeout`.
  bool wait_for(std::chrono::milliseconds timeout);
  // Calls `hook(ok)` once, when the reply (ok) or its failure (not ok) is there: at once
  // when it already is, else on the thread that completes the call (the
  // RPC thread, or a caller reading the socket), with the endpoint's lock
  // held. So the hook must be short, must not throw and must not call into
  // the RpcServer or wait on a reply; it is for waking a waiter. One hook
  // per future; a second call replaces a hook that has not run yet.
  void on_ready(std::function<void(bool ok)> hook);

 private:
  friend class RpcServer;
  ReplyFuture(std::shared_ptr<rpc_detail::Endpoint> endpoint, std::shared_ptr<rpc_detail::ReplyState> state)
      : endpoint_(std::move(endpoint)), state_(std::move(state)) {}
  std::shared_ptr<rpc_detail::Endpoint> endpoint_;
  std::shared_ptr<rpc_detail::ReplyState> state_;
};

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
  std::string host_id;  // host_identity() of the worker; shared memory only when it equals ours
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
  ReplyFuture call(const std::string& worker, const std::string& model, const std::string& method,
                   Batch input, nlohmann::json args = nlohmann::json::object(),
                   nlohmann::json context = nlohmann::json::object(),
                   std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // One call of `method` to each of several workers (a group's ranks),
  // inputs[i] to workers[i]: every message is encoded first, then all are
  // sent back to back. Sending each as it is encoded let the first rank
  // wake and take a core while the controller still encoded the next, so
  // the ranks started a whole encode (and often a scheduling slice) apart.
  std::vector<ReplyFuture> call_each(const std::vector<std::string>& workers, const std::string& model,
                                     const std::string& method, std::vector<Batch> inputs,
                                     const nlohmann::json& args, const nlohmann::json& context,
                                     std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  // Marks a worker dead (e.g. the launcher saw its process exit) and fails
  // its pending calls with `reason`.
  void report_worker_death(const std::string& worker, const std::string& reason);

  std::vector<WorkerInfo> workers() const;
  std::optional<WorkerInfo> worker(const std::string& id) const;

  // Asks every live worker to exit (fire and forget).
  void shutdown_workers();

 private:
  // A call's message encoded and its reply registered, not yet sent (its
  // frames are empty when it already failed: the future holds why).
  ReplyFuture prepare(const std::string& worker, const std::string& model, const std::string& method,
                      const Batch& input, const nlohmann::json& args, const nlohmann::json& context,
                      std::chrono::milliseconds timeout, rpc_detail::PreparedCall& out);
  void send(std::vector<rpc_detail::PreparedCall>& calls);

  std::shared_ptr<rpc_detail::Endpoint> impl_;
};

}  // namespace rlwb::core
