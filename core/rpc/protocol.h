// The RPC protocol between the controller (ROUTER) and worker processes
// (DEALER), on top of the wire codec (core/wire/wire.h). Shared by
// core/rpc (controller side) and workers/ (worker side).
//
// Header "kind" values:
//   worker -> controller: "register" {worker, group, rank, world, host, host_id,
//                          pid, devices, roles: {role: {method: dispatch mode}}}
//                         "heartbeat", "reply" {id, status: ok|error, error}
//   controller -> worker: "welcome" {host_id}, "heartbeat", "shutdown",
//                         "call" {id, model, method, args, context}
// A worker's ZeroMQ routing id is its worker id "<group>/<rank>".
// host_id (core/wire/host_identity.h) tells each side whether the other
// shares its /dev/shm: only then do big tensors go through shared memory.
// Every "call" gets exactly one "reply" with the same id, or the controller
// fails it itself (timeout, worker died) -- never both, never neither.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>

namespace rlwb::core {

namespace wire_kind {
inline constexpr const char* kRegister = "register";
inline constexpr const char* kWelcome = "welcome";
inline constexpr const char* kHeartbeat = "heartbeat";
inline constexpr const char* kCall = "call";
inline constexpr const char* kReply = "reply";
inline constexpr const char* kShutdown = "shutdown";
}  // namespace wire_kind

// Built-in methods every worker answers (not part of any role).
inline constexpr const char* kInitModelMethod = "__init_model__";  // args: {role, config, mesh}
inline constexpr const char* kPingMethod = "__ping__";             // echoes its input
// The profiler (workers/profiler): args {action: "configure", options} before
// the first profiled call; {action: "collect"} returns the context tree of
// the calls profiled since the last collect in the reply's meta "profile".
inline constexpr const char* kProfileMethod = "__profile__";

// A call's outputs kept on each rank for the calls sent right behind it
// (WorkerGroup::call_after), in the input Batch's meta: the call's input
// carries {kKeepOutputsKey: token}; a call behind it {kInputsKeptKey:
// {"token": token, "columns": {its input port: the first call's output
// port}}}. The worker takes both keys out before the method sees the meta.
inline constexpr const char* kKeepOutputsKey = "keep_outputs_as";
inline constexpr const char* kInputsKeptKey = "inputs_kept_as";

// Where an error happened, as the worker reports it.
struct RemoteErrorInfo {
  std::string group, host, model, method, message;
  int rank = -1;
  int pid = 0;
  nlohmann::json to_json() const;
  static RemoteErrorInfo from_json(const nlohmann::json& j);
};

// Raised to the caller of a worker method that failed remotely, timed out,
// or whose worker died. what() names group, rank, host, method and message.
class RemoteError : public std::runtime_error {
 public:
  explicit RemoteError(RemoteErrorInfo info);
  const RemoteErrorInfo& info() const { return info_; }

 private:
  RemoteErrorInfo info_;
};

std::string worker_id(const std::string& group, int rank);

}  // namespace rlwb::core
