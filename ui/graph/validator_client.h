// Live validation for the editor. The document's YAML goes through the code
// `rlwb validate` runs: core::load_experiment_text, then
// core::validate_experiment against a catalog (editor_catalog.h says which).
// It runs in this process, on a background thread, so a large graph never
// holds up a frame; no file is written and no program is started.
//
// Results are tagged with the document version they belong to. A new
// version is checked once it has been stable for a short pause, so typing
// starts one check, not one per key; a check in flight finishes and the
// newest version is checked after it. Load errors (GraphError: YAML syntax,
// wrong types) come back as issues like the validator's, with their lines.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"

namespace rlwb::ui {

// One check, on the calling thread: every issue of `text` read as `file`
// (its name in the issues), load errors included. Never throws.
std::vector<core::GraphIssue> validate_text(const std::string& text, const std::string& file,
                                            const core::MethodCatalog& catalog);

class ValidatorClient {
 public:
  ValidatorClient() = default;
  ~ValidatorClient();  // waits for a check in flight (it does not block on I/O)
  ValidatorClient(const ValidatorClient&) = delete;
  ValidatorClient& operator=(const ValidatorClient&) = delete;

  // For a newly opened document: checks against `catalog` from now on and
  // forgets the versions and issues so far (a new document's versions start
  // over; a check in flight is dropped). Without a catalog nothing is
  // checked and state() stays idle.
  void reset(std::shared_ptr<const core::MethodCatalog> catalog);
  // Call every frame with the current text and the file it will be saved
  // to; starts a check when the version is new and has been stable for a
  // moment.
  void update(uint64_t version, const std::string& yaml_text, const std::string& file);

  enum class State { idle, checking, done };
  State state() const;
  uint64_t checked_version() const;  // version the issues belong to
  std::vector<core::GraphIssue> issues() const;
  // Nothing left to do: the last version given to update() has been checked.
  bool settled() const;

 private:
  void run_check(uint64_t generation, uint64_t version, std::string text, std::string file,
                 std::shared_ptr<const core::MethodCatalog> catalog);

  mutable std::mutex mu_;
  std::shared_ptr<const core::MethodCatalog> catalog_;
  State state_ = State::idle;
  uint64_t generation_ = 0;  // one per reset(): results of an earlier one are dropped
  uint64_t wanted_ = 0, checked_ = 0;
  std::chrono::steady_clock::time_point changed_at_;
  std::vector<core::GraphIssue> issues_;
  std::thread worker_;
  bool busy_ = false;  // a check's thread is running
};

}  // namespace rlwb::ui
