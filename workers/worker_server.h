// The worker process's RPC loop. One DEALER socket dials the controller's
// ROUTER. The main thread receives the calls and runs them itself, in
// arrival order -- SPMD ranks must run collectives in the same order, and
// colocated roles time-share the process -- so an empty call costs no
// thread hand-off. While a method runs, a guard thread takes the socket
// (under a mutex) to keep heartbeats going and queue the calls that arrive. Every call gets
// exactly one reply; an exception becomes an error reply naming group,
// rank, host, method and message; a malformed message gets an error reply
// (when it has an id) and the worker keeps serving. The worker exits when
// told to, or when the controller has been silent for `controller_timeout`.
#pragma once

#include "core/wire/wire.h"
#include "workers/method_registry.h"
#include "workers/spmd_group.h"

#include <chrono>
#include <string>

namespace rlwb::workers {

struct WorkerOptions {
  std::string controller;  // address to dial
  std::string group = "main";
  int rank = 0, world = 1;
  std::string device = "cpu";
  SpmdOptions spmd;  // store address for the pool's process group
  core::WireOptions wire;
  std::chrono::milliseconds heartbeat_interval{200};
  std::chrono::milliseconds controller_timeout{10000};
};

// Runs until shutdown; returns the process exit code.
int run_worker(const WorkerOptions& options, const RoleRegistry& registry);

}  // namespace rlwb::workers
