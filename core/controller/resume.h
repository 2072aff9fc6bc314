// rlwb run --resume RUN: the checks made before anything starts, and what
// the controller continues from. Each failure is a ResumeError that names
// the cause and the fix, and leaves the tracking DB as it was:
//   - an unknown run, a finished run, a run still running;
//   - a run without a resumable checkpoint (no trainer.checkpoint, or it
//     ended before the first);
//   - checkpoints that are all truncated or corrupt (each one's problem);
//   - a graph file whose models no longer fit the checkpoint (what changed:
//     "models.actor.model.hidden_size: 32 in the checkpoint, 64 now").
// A bad checkpoint newer than a good one is skipped; `skipped` says why,
// and the controller records it as a warning event.
#pragma once

#include "core/controller/checkpoint_store.h"
#include "core/graph/experiment.h"
#include "core/tracking/tracking.h"

#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

class ResumeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ResumePlan {
  int64_t run_id = 0;
  FoundCheckpoint checkpoint;
  std::vector<std::string> earlier;  // the run's older checkpoint folders that exist, oldest first
};

// The folders of the run's resumable checkpoints as its artifacts record
// them, newest first (deleted ones included: keep removes folders, not rows).
std::vector<std::string> recorded_checkpoints(TrackingReader& reader, int64_t run);
// The run, if it may be resumed (not finished, not running). `db` is for messages.
RunInfo resumable_run(TrackingReader& reader, int64_t run, const std::string& db);
// The newest good checkpoint of `run` that fits `exp`.
ResumePlan plan_resume(TrackingReader& reader, const RunInfo& run, const Experiment& exp);
// The shapes and layouts a checkpoint records (manifest `models`): per
// model its role, pool, pool size, parallel layout, architecture and
// tokenizer settings.
nlohmann::json checkpoint_model_signature(const Experiment& exp);
// What differs between a checkpoint's model signature and the experiment's,
// one line per difference; empty when it fits.
std::vector<std::string> signature_changes(const nlohmann::json& saved, const nlohmann::json& now);

}  // namespace rlwb::core
