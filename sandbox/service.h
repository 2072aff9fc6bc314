// rlwb-sandbox, the service: a ZeroMQ ROUTER socket in front of a pool of
// executors (executor.h). The controller starts it when a graph uses the
// code reward; `rlwb sandbox serve` starts it standalone. Protocol:
// protocol.h; client: client.h.
//
// Threads: one I/O thread (the caller of serve()) owns the socket, parses
// requests, answers bad ones at once and queues the rest; one worker thread
// per executor takes queued requests and runs them. Memory stays bounded:
// at most max_queued requests / max_queued_bytes wait (more are answered
// "overloaded" at once), replies a slow client has not taken yet are kept
// up to max_pending_reply_bytes, and a request larger than
// max_request_bytes is refused. A client that disconnects mid-request
// costs the executor at most that request's limits; its reply is dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sandbox/executor_pool.h"

namespace rlwb::sandbox {

inline constexpr const char* kDefaultEndpoint = "ipc:///tmp/rlwb-sandbox.sock";

struct ServiceOptions {
  std::string endpoint = kDefaultEndpoint;  // ipc://PATH or tcp://HOST:PORT (port 0: any)
  PoolOptions pool;
  size_t max_queued = 100000;
  uint64_t max_queued_bytes = uint64_t(1) << 30;
  uint64_t max_request_bytes = uint64_t(64) << 20;
  uint64_t max_pending_reply_bytes = uint64_t(256) << 20;
};

struct ServiceStats {
  uint64_t received = 0, answered = 0, rejected = 0, dropped_replies = 0;
  size_t queued = 0, running = 0;
  int executors = 0;
  int64_t rss_kb = 0;
  nlohmann::json to_json() const;
};

class SandboxService {
 public:
  // Starts the executors (before any ZeroMQ thread exists) and binds.
  // Throws SandboxError if the sandbox cannot be built or the bind fails.
  explicit SandboxService(ServiceOptions options = {});
  ~SandboxService();
  SandboxService(const SandboxService&) = delete;
  SandboxService& operator=(const SandboxService&) = delete;

  const std::string& endpoint() const;  // resolved (the chosen port for tcp port 0)

  // Serves until `stop` becomes true (checked every 100 ms), then stops the
  // workers (each finishes its current request) and returns.
  void serve(const std::atomic<bool>& stop);

  ServiceStats stats() const;
  const KernelSupport& kernel_support() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// serve() until SIGINT or SIGTERM; prints the endpoint and the isolation
// report to `log`. Returns the process exit status.
int serve_until_signal(const ServiceOptions& options, std::ostream& log);

}  // namespace rlwb::sandbox
