// Live validation for the editor without linking the workers (and LibTorch)
// into the GUI: the validator's catalog (every role's methods, builtins, task
// columns) is built by the rlwb CLI, so the editor asks the CLI. It writes
// the document's current YAML to a private temp file and runs
// `rlwb validate TMP` on a background thread, then reads the issues back
// from its output (GraphIssue::to_string lines). Results are tagged with the
// document version they belong to; a newer edit restarts the check after a
// short pause, so typing does not start a process per key.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/graph/experiment.h"

namespace rlwb::ui {

// Parses `rlwb validate` output for a file named `file`: one issue per
// "  file[:line]: [warning: ][node 'x': ]message[ (hint: ...)]" line.
std::vector<core::GraphIssue> parse_validate_output(const std::string& output,
                                                    const std::string& file);

class ValidatorClient {
 public:
  ValidatorClient() = default;
  ~ValidatorClient();
  ValidatorClient(const ValidatorClient&) = delete;
  ValidatorClient& operator=(const ValidatorClient&) = delete;

  void set_cli(const std::string& cli_path) { cli_ = cli_path; }
  // Call every frame with the current text; starts a check when the version
  // is new and has been stable for a moment.
  void update(uint64_t version, const std::string& yaml_text);

  enum class State { idle, checking, done, unavailable };
  State state() const;
  uint64_t checked_version() const;  // version the issues belong to
  std::vector<core::GraphIssue> issues() const;
  std::string message() const;  // why unavailable, or the CLI's odd output
  // Nothing left to do: the last version given to update() has been checked
  // (or the CLI cannot run).
  bool settled() const;

 private:
  void run_check(uint64_t version, std::string text);

  std::string cli_;
  mutable std::mutex mu_;
  State state_ = State::idle;
  uint64_t wanted_ = 0, running_ = 0, checked_ = 0;
  std::chrono::steady_clock::time_point changed_at_;
  std::vector<core::GraphIssue> issues_;
  std::string message_;
  std::thread worker_;
  std::atomic<bool> busy_{false};
  std::atomic<bool> closing_{false};  // the destructor kills a check in flight
};

// Runs argv (argv[0] a path) with stdout+stderr captured; returns the exit
// status, or -1 when it could not start or was killed: after `timeout`, or
// as soon as `cancel` becomes true (output then says why). Used by the
// validator client.
int run_and_capture(const std::vector<std::string>& argv, std::string& output,
                    std::chrono::milliseconds timeout = std::chrono::seconds(60),
                    const std::atomic<bool>* cancel = nullptr);

}  // namespace rlwb::ui
