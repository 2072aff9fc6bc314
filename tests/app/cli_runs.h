// For the CLI tests of whole runs (resume, restart, export): the processes
// (tests/app/cli_process.h; runs write their run folders and checkpoints
// relative to where rlwb runs) and what such a run left in its DB.
#pragma once

#include "core/controller/checkpoint_store.h"
#include "core/tracking/tracking.h"
#include "tests/app/cli_process.h"
#include "tests/test_files.h"
#include "tests/test_paths.h"

#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <chrono>
#include <cmath>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace rlwb::testing {

// Every metric but the wall-clock ones, by (key, step); a key at a step twice fails.
inline std::map<std::pair<std::string, int64_t>, double> metrics_of(const std::string& db, int64_t run) {
  std::map<std::pair<std::string, int64_t>, double> out;
  for (auto& p : core::TrackingReader(db).metrics(run)) {
    // Wall-clock keys, at any prefix (val/, warm_start/): timing_s/, compute_s/, perf/.
    if (p.key.find("timing_s/") != std::string::npos || p.key.find("compute_s/") != std::string::npos ||
        p.key.rfind("perf/", 0) == 0)
      continue;
    EXPECT_TRUE(out.emplace(std::pair(p.key, p.step), p.value).second)
        << p.key << " twice at step " << p.step;
  }
  return out;
}

// The files of the run's final actor save (trainer.save), by name.
inline std::map<std::string, std::string> final_actor(const std::string& db, int64_t run) {
  std::map<std::string, std::string> files;
  for (auto& a : core::TrackingReader(db).artifacts(run))
    if (a.kind == "checkpoint" && std::filesystem::path(a.path).filename() == "actor") {
      files.clear();
      for (auto& f : std::filesystem::directory_iterator(a.path))
        files[f.path().filename().string()] = read_bytes(f.path().string());
    }
  return files;
}

// Run 1 of `db` logged the metrics of run 1 of `reference_db`, bit for bit
// (and the reference has more than `at_least` of them).
inline void expect_same_metrics(const std::string& reference_db, const std::string& db,
                                size_t at_least = 60) {
  auto reference = metrics_of(reference_db, 1), other = metrics_of(db, 1);
  EXPECT_GT(reference.size(), at_least);
  ASSERT_EQ(reference.size(), other.size());
  for (auto& [key_step, value] : reference) {
    auto found = other.find(key_step);
    ASSERT_NE(found, other.end()) << key_step.first << " at step " << key_step.second;
    if (std::isnan(value)) continue;
    EXPECT_EQ(value, found->second) << key_step.first << " at step " << key_step.second;
  }
}

inline bool has_checkpoint_of_step(const std::string& db, int64_t run, int64_t step) {
  try {
    if (!std::filesystem::exists(db)) return false;
    for (auto& a : core::TrackingReader(db).artifacts(run))
      if (a.kind == core::kResumeCheckpointArtifact &&
          std::filesystem::path(a.path).filename() == core::checkpoint_folder_name(step))
        return true;
  } catch (const std::exception&) {  // the DB is being made
  }
  return false;
}

}  // namespace rlwb::testing
