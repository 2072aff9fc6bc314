#include "rewards/modules/sandbox_connection.h"

#include "core/launch/local_launcher.h"
#include "sandbox/client.h"
#include "sandbox/sandbox_error.h"
#include "sandbox/service_launch.h"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>
#include <thread>

namespace rlwb::rewards {

std::string sandbox_binary_path() {
  if (const char* env = std::getenv("RLWB_SANDBOX_BIN"); env && *env) return env;
  return sandbox::find_sandbox_binary();
}

SandboxConnection::SandboxConnection(SandboxConnectionOptions options, std::string owner)
    : owner_(std::move(owner)) {
  sandbox::ClientOptions client_options;
  client_options.timeout = options.call_timeout;
  if (!options.address.empty()) {
    address_ = options.address;
    client_ = std::make_unique<sandbox::SandboxClient>(address_, client_options);
    try {
      client_->ping(options.startup_timeout);
    } catch (const sandbox::SandboxError& e) {
      throw std::runtime_error(owner_ + ": no rlwb-sandbox service answers at " + address_ + " (" + e.what() +
                               "); start one with `rlwb sandbox serve --endpoint " + address_ +
                               "`, or remove `address` to let the reward start its own");
    }
    return;
  }

  std::string binary;
  try {
    binary = options.binary.empty() ? sandbox_binary_path() : options.binary;
  } catch (const sandbox::SandboxError& e) {
    throw std::runtime_error(owner_ + ": " + e.what() +
                             " (or set RLWB_SANDBOX_BIN, or the reward's sandbox_binary)");
  }
  if (::access(binary.c_str(), X_OK) != 0)
    throw std::runtime_error(owner_ + ": the sandbox program '" + binary +
                             "' does not exist or is not executable; " +
                             "build rlwb-sandbox, or point sandbox_binary (or RLWB_SANDBOX_BIN) at it");

  static std::atomic<int> counter{0};
  run_dir_ = (std::filesystem::temp_directory_path() /
              ("rlwb-code-reward-" + std::to_string(::getpid()) + "-" + std::to_string(counter++)))
                 .string();
  std::filesystem::create_directories(run_dir_);
  address_ = "ipc://" + run_dir_ + "/sandbox.sock";
  launcher_ = std::make_unique<core::LocalLauncher>(run_dir_);
  core::ProcessSpec spec;
  spec.name = "sandbox";
  spec.argv = sandbox::service_argv(binary, address_, options.executors);
  pid_ = launcher_->start(spec);
  client_ = std::make_unique<sandbox::SandboxClient>(address_, client_options);

  const auto until = std::chrono::steady_clock::now() + options.startup_timeout;
  std::string last;
  while (true) {
    check_alive("during start-up");
    try {
      client_->ping(std::chrono::milliseconds(250));
      return;
    } catch (const sandbox::SandboxError& e) {
      last = e.what();
    }
    if (std::chrono::steady_clock::now() >= until) {
      std::string log = launcher_->log_tail("sandbox", 2000);
      throw std::runtime_error(owner_ + ": the rlwb-sandbox service it started (" + binary + ", pid " +
                               std::to_string(pid_) + ") did not answer within " +
                               std::to_string(options.startup_timeout.count()) + " ms: " + last +
                               (log.empty() ? "" : "; its log:\n" + log));
    }
  }
}

SandboxConnection::~SandboxConnection() {
  client_.reset();
  if (launcher_) {
    launcher_->stop_all(std::chrono::milliseconds(3000));
    launcher_.reset();
    std::error_code ec;
    std::filesystem::remove_all(run_dir_, ec);
  }
}

void SandboxConnection::check_alive(const std::string& when) {
  if (!launcher_) return;
  std::lock_guard lock(death_mu_);
  for (const auto& exit : launcher_->poll_exits())
    death_ = owner_ + ": the rlwb-sandbox service it started (pid " + std::to_string(exit.pid) + ") " +
             exit.describe() + " " + when + "; its log:\n" + launcher_->log_tail("sandbox", 2000);
  if (!death_.empty()) throw std::runtime_error(death_);
}

std::vector<sandbox::JudgeResult> SandboxConnection::judge_all(
    const std::vector<sandbox::JudgeRequest>& requests) {
  check_alive("before this batch");
  auto results = client_->judge_all(requests);
  check_alive("while judging this batch");
  return results;
}

}  // namespace rlwb::rewards
