#include "ui/profile/profile_loader.h"

#include <algorithm>
#include <chrono>

#include "core/profile/profile_store.h"
#include "core/tracking/profile_rows.h"
#include "core/tracking/tracking.h"

namespace rlwb::ui {

// What one pass of the reader thread read.
struct ProfileLoader::Fetched {
  bool has_list = false;
  std::vector<int64_t> profiled;
  std::string list_error;
  std::map<int64_t, LoadedProfile> loaded;

  void merge(Fetched&& newer) {
    if (newer.has_list) {
      has_list = true;
      profiled = std::move(newer.profiled);
      list_error = std::move(newer.list_error);
    }
    for (auto& [run, p] : newer.loaded) loaded[run] = std::move(p);
  }
};

ProfileLoader::ProfileLoader() = default;
ProfileLoader::~ProfileLoader() { close(); }

void ProfileLoader::open(const std::string& db_path, int poll_ms) {
  close();
  db_path_ = db_path;
  poll_ms_ = poll_ms;
  stop_ = false;
  loaded_.clear();
  profiled_.clear();
  listed_ = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_read_ = wanted_ui_;
  }
  thread_ = std::thread(&ProfileLoader::read_loop, this);
}

void ProfileLoader::close() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void ProfileLoader::want(const std::set<int64_t>& runs) {
  bool added = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t run : runs)
      if (!wanted_ui_.count(run) && !loaded_.count(run)) to_read_.insert(run), added = true;
  }
  wanted_ui_ = runs;
  std::erase_if(loaded_, [&](const auto& entry) { return !runs.count(entry.first); });
  if (added) wake_.notify_all();
}

void ProfileLoader::reload(int64_t run) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    to_read_.insert(run);
  }
  wake_.notify_all();
}

const LoadedProfile* ProfileLoader::get(int64_t run) const {
  auto it = loaded_.find(run);
  return it == loaded_.end() ? nullptr : &it->second;
}

bool ProfileLoader::is_profiled(int64_t run) const {
  return std::binary_search(profiled_.begin(), profiled_.end(), run);
}

bool ProfileLoader::settled() const {
  if (!listed_) return false;
  for (int64_t run : wanted_ui_)
    if (!loaded_.count(run)) return false;
  return true;
}

void ProfileLoader::update() {
  std::unique_ptr<Fetched> fetched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fetched.swap(pending_);
  }
  if (!fetched) return;
  if (fetched->has_list) {
    listed_ = true;
    profiled_ = std::move(fetched->profiled);
    list_error_ = std::move(fetched->list_error);
  }
  for (auto& [run, p] : fetched->loaded) {
    if (!wanted_ui_.count(run)) continue;  // no longer shown
    p.version = next_version_++;
    loaded_[run] = std::move(p);
  }
}

void ProfileLoader::read_loop() {
  std::unique_ptr<core::TrackingReader> reader;
  while (!stop_) {
    std::set<int64_t> reads;
    {
      std::lock_guard<std::mutex> lock(mu_);
      reads.swap(to_read_);
    }
    Fetched fetched;
    fetched.has_list = true;
    try {
      fetched.profiled = core::runs_with_profile_rows(db_path_, "meta");
    } catch (const std::exception& e) {
      fetched.list_error = e.what();
    }
    std::set<int64_t> retry;
    for (int64_t run : reads) {
      if (stop_) break;
      LoadedProfile p;
      p.run = run;
      try {
        if (!reader) reader = std::make_unique<core::TrackingReader>(db_path_);
        auto profile =
            std::make_shared<core::profile::RunProfile>(core::profile::load_run_profile(*reader, run));
        p.findings = core::profile::analyze(*profile);
        p.profile = std::move(profile);
      } catch (const core::profile::ProfileError& e) {
        p.error = e.what();  // the run's own problem: shown as the CLI says it
      } catch (const std::exception& e) {
        // The DB's problem (missing, locked): shown, and read again next poll.
        p.error = e.what();
        reader.reset();
        retry.insert(run);
      }
      fetched.loaded[run] = std::move(p);
    }
    std::unique_lock<std::mutex> lock(mu_);
    to_read_.insert(retry.begin(), retry.end());
    if (!pending_) pending_ = std::make_unique<Fetched>();
    pending_->merge(std::move(fetched));
    wake_.wait_for(lock, std::chrono::milliseconds(poll_ms_),
                   [&] { return stop_ || (!to_read_.empty() && retry.empty()); });
  }
}

}  // namespace rlwb::ui
