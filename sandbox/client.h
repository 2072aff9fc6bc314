// Talks to an rlwb-sandbox service (service.h) over ZeroMQ: the same
// Sandbox interface as the in-process LocalSandbox. One DEALER socket;
// judge_all() pipelines every request and matches replies by id, so a
// batch of rollouts is judged by all the service's executors at once.
// Every wait is bounded by ClientOptions::timeout (a missing reply becomes
// an Outcome::sandbox_error result saying so). Calls on one client are
// serialised by a mutex; use one client per thread for parallel callers.
#pragma once

#include <chrono>
#include <memory>
#include <mutex>
#include <nlohmann/json_fwd.hpp>
#include <string>

#include "sandbox/sandbox.h"

namespace rlwb::sandbox {

struct ClientOptions {
  // Bound on one call (for judge_all: on the whole batch).
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  uint64_t max_request_bytes = uint64_t(64) << 20;  // the service's default limit
};

class SandboxClient : public Sandbox {
 public:
  explicit SandboxClient(std::string endpoint, ClientOptions options = {});
  ~SandboxClient() override;

  Verdict run(const RunRequest& request) override;
  JudgeResult judge(const JudgeRequest& request) override;
  std::vector<JudgeResult> judge_all(const std::vector<JudgeRequest>& requests) override;
  std::vector<Verdict> run_all(const std::vector<RunRequest>& requests);

  // The service's ping reply ({"executors", "namespaces", "fallbacks"});
  // throws SandboxError when it does not answer within `timeout`.
  nlohmann::json ping(std::chrono::milliseconds timeout = std::chrono::seconds(5));
  nlohmann::json stats(std::chrono::milliseconds timeout = std::chrono::seconds(5));

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rlwb::sandbox
