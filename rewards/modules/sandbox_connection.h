// The code reward's link to an rlwb-sandbox service (sandbox/client.h):
// either a service it starts itself -- a child process (core::LocalLauncher:
// killed with its owner, even on SIGKILL) stopped when this is destroyed --
// or one already running at a given address. Every wait is bounded: the
// start-up by `startup_timeout`, each batch by `call_timeout`.
#pragma once

#include "sandbox/requests.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <sys/types.h>
#include <vector>

namespace rlwb::core {
class LocalLauncher;
}
namespace rlwb::sandbox {
class SandboxClient;
}

namespace rlwb::rewards {

struct SandboxConnectionOptions {
  std::string address;  // set: connect to this running service (ipc://, tcp://); start nothing
  std::string binary;   // the rlwb-sandbox to start; empty: sandbox_binary_path()
  int executors = 0;    // executors of a started service; 0: one per CPU
  std::chrono::milliseconds startup_timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds call_timeout{std::chrono::minutes(5)};  // one judge_all
};

// $RLWB_SANDBOX_BIN, else sandbox::find_sandbox_binary() ($RLWB_SANDBOX, then
// rlwb-sandbox next to the running program or in ../sandbox of a build tree).
std::string sandbox_binary_path();

class SandboxConnection {
 public:
  // Starts (or reaches) the service; throws std::runtime_error naming
  // `owner` when the binary is missing, the service exits during start-up
  // (with its log) or does not answer within startup_timeout.
  SandboxConnection(SandboxConnectionOptions options, std::string owner);
  ~SandboxConnection();  // stops a started service (SIGTERM, then SIGKILL) and removes its files
  SandboxConnection(const SandboxConnection&) = delete;
  SandboxConnection& operator=(const SandboxConnection&) = delete;

  // All requests at once: the service spreads them over its executors. A
  // request the service did not answer in time comes back as a
  // sandbox_error result. Throws when a started service has died.
  std::vector<sandbox::JudgeResult> judge_all(const std::vector<sandbox::JudgeRequest>& requests);

  const std::string& address() const { return address_; }
  pid_t service_pid() const { return pid_; }  // 0 when connected to a service started elsewhere

 private:
  void check_alive(const std::string& when);

  std::string owner_;
  std::string address_;
  std::string run_dir_;  // socket and log of a started service
  pid_t pid_ = 0;
  std::mutex death_mu_;
  std::string death_;  // set once a started service is seen dead: every later call fails with it
  std::unique_ptr<core::LocalLauncher> launcher_;
  std::unique_ptr<sandbox::SandboxClient> client_;
};

}  // namespace rlwb::rewards
