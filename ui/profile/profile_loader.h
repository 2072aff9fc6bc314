// The Profile screen's data, read off the UI thread. The screen says which
// runs it shows (want()); a background thread reads each one with
// core/profile's load_run_profile -- the reader `rlwb profile` uses, so a
// run that cannot be shown fails with the CLI's own ProfileError text ("run
// 3 (demo) was not profiled: run it again with ...") -- runs the analyzer on
// it (core/profile/analyzer.h), and lists the DB's profiled runs every poll.
// The UI thread takes what was read once a frame (update()) and owns it from
// then on, so drawing never waits on SQLite or on the analyzer. The same
// pattern as RunStore (ui/runs/run_store.h), for a different table.
//
// A run is read once; reload() reads it again (the screen does so when a
// running run has finished, or on the Reload button).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "core/profile/analyzer.h"
#include "core/profile/run_profile.h"

namespace rlwb::ui {

struct LoadedProfile {
  int64_t run = 0;
  // Null when the run could not be read; `error` says why.
  std::shared_ptr<const core::profile::RunProfile> profile;
  std::vector<core::profile::Finding> findings;  // analyze(*profile), best first
  std::string error;                             // ProfileError's text, or the DB's
  uint64_t version = 0;                          // bumped on every (re)load
};

class ProfileLoader {
 public:
  ProfileLoader();
  ~ProfileLoader();
  ProfileLoader(const ProfileLoader&) = delete;
  ProfileLoader& operator=(const ProfileLoader&) = delete;

  // Starts the reader thread on `db_path` (a missing DB is retried).
  void open(const std::string& db_path, int poll_ms = 1000);
  void close();

  // UI thread, once a frame: takes what the thread has read.
  void update();

  // The runs the screen shows; each is read once, in the background.
  void want(const std::set<int64_t>& runs);
  void reload(int64_t run);
  // What was read of `run` (null until it has been read).
  const LoadedProfile* get(int64_t run) const;

  // The runs with a profile (a "meta" row), ascending; empty until listed().
  const std::vector<int64_t>& profiled_runs() const { return profiled_; }
  bool is_profiled(int64_t run) const;
  bool listed() const { return listed_; }
  // Why the list could not be read ("" when fine).
  const std::string& list_error() const { return list_error_; }
  // Every wanted run has been read (or failed) and the list has arrived.
  bool settled() const;

 private:
  struct Fetched;
  void read_loop();

  std::string db_path_;
  int poll_ms_ = 1000;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  mutable std::mutex mu_;
  std::condition_variable wake_;

  // Shared with the thread (under mu_).
  std::set<int64_t> wanted_, to_read_;
  std::unique_ptr<Fetched> pending_;

  // UI thread only.
  std::map<int64_t, LoadedProfile> loaded_;
  std::set<int64_t> wanted_ui_;
  std::vector<int64_t> profiled_;
  bool listed_ = false;
  std::string list_error_;
  uint64_t next_version_ = 1;
};

}  // namespace rlwb::ui
