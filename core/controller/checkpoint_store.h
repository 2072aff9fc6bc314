// Resumable checkpoints on disk (trainer.checkpoint; rlwb run --resume).
// A checkpoint is one folder, <run folder>/step-<NNNNNN>, holding
//   <model>/rank-<r>.pt  each rank's own state, as it holds it (its weights
//                        shard, optimizer moments and counts, schedule
//                        position, torch random state; workers/roles/
//                        role_state.h writes them), and
//   manifest.json        the step, the controller's state (builtin node
//                        states: the adaptive KL coefficient, Safe-RLHF's
//                        multiplier; the sampler's position), the models'
//                        shapes and layouts, and every file's size and
//                        FNV-1a 64 digest.
// Atomic: the workers and the manifest write into step-<N>.partial (each
// file fsynced), which is renamed to step-<N> only once the manifest is
// written, and the parent folder fsynced. A folder without a manifest, or
// one whose files do not match it (truncated, corrupt, missing, extra), is
// not a checkpoint: verify_checkpoint says why, and newest_good_checkpoint
// falls back to the one before it.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

// The tracking DB's artifact kind of a resumable checkpoint (the HF-layout
// saves are "checkpoint").
inline constexpr const char* kResumeCheckpointArtifact = "resume_checkpoint";
inline constexpr const char* kCheckpointManifest = "manifest.json";

class CheckpointError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct CheckpointFile {
  std::string path;  // relative to the checkpoint folder
  uint64_t bytes = 0;
  std::string digest;  // core/common/durable_file.h
};

struct CheckpointManifest {
  int64_t step = 0;
  nlohmann::json state = nlohmann::json::object();   // the controller's
  nlohmann::json models = nlohmann::json::object();  // model -> shape and layout
  std::vector<CheckpointFile> files;
};

// <root>/step-000004, and the folder it is written in first.
std::string checkpoint_folder_name(int64_t step);
std::string partial_folder(const std::string& final_dir);

// Seals what the workers wrote into partial_folder(final_dir): lists and
// hashes every file into the manifest, writes it durably, renames the
// folder to final_dir and fsyncs the parent. A final_dir that exists (a
// rerun of the same step) is replaced.
void seal_checkpoint(const std::string& final_dir, CheckpointManifest manifest);

// The manifest of a sealed checkpoint after checking every file against
// it. Throws CheckpointError naming the folder and the first problem.
CheckpointManifest verify_checkpoint(const std::string& dir);

struct FoundCheckpoint {
  std::string dir;
  CheckpointManifest manifest;
  std::vector<std::string> skipped;  // "<dir>: why", for each newer one that was bad
};
// The first good checkpoint of `dirs` (newest first); nullopt when none is
// good (then `skipped` lists why, through the out-parameter).
std::optional<FoundCheckpoint> newest_good_checkpoint(const std::vector<std::string>& dirs,
                                                      std::vector<std::string>* skipped = nullptr);

}  // namespace rlwb::core
