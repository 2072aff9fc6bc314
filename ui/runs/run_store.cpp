#include "ui/runs/run_store.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "ui/plot/series.h"

namespace rlwb::ui {
namespace {

constexpr const char* kScoreKey = "critic/score/mean";
constexpr auto kRunningDetailsEvery = std::chrono::seconds(2);

struct Details {
  std::vector<std::pair<std::string, std::string>> params, tags;
  std::optional<double> best_score;
};

template <typename T>
void append(std::vector<T>& to, std::vector<T>&& from) {
  if (to.empty()) {
    to = std::move(from);
  } else {
    to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
  }
}

}  // namespace

struct FetchedRuns {
  bool has_list = false;
  std::vector<core::RunInfo> list;
  std::map<int64_t, Details> details;
  std::map<int64_t, std::vector<core::MetricPoint>> metrics;
  std::map<int64_t, std::vector<core::EventRecord>> events;
  std::map<int64_t, std::vector<core::SampleRecord>> samples;
  std::set<int64_t> loaded;

  void merge(FetchedRuns&& newer) {
    if (newer.has_list) has_list = true, list = std::move(newer.list);
    for (auto& [id, d] : newer.details) details[id] = std::move(d);
    for (auto& [id, v] : newer.metrics) append(metrics[id], std::move(v));
    for (auto& [id, v] : newer.events) append(events[id], std::move(v));
    for (auto& [id, v] : newer.samples) append(samples[id], std::move(v));
    loaded.insert(newer.loaded.begin(), newer.loaded.end());
  }
};

namespace {

struct Cursor {
  int64_t metrics = 0, events = 0, samples = 0;
};

// What the poller remembers between polls.
struct PollMemory {
  std::map<int64_t, Cursor> cursors;
  std::map<int64_t, std::string> status_seen;
  std::map<int64_t, std::chrono::steady_clock::time_point> details_at;
};

// One poll: the run list, details that are due, and new rows of watched runs.
void poll_once(core::TrackingReader& reader, const std::set<int64_t>& watched, const std::set<int64_t>& stale,
               bool refresh_all, PollMemory& memory, FetchedRuns& out) {
  auto now = std::chrono::steady_clock::now();
  out.has_list = true;
  out.list = reader.list_runs();
  for (const core::RunInfo& info : out.list) {
    const bool running = info.status == "running";
    auto seen = memory.status_seen.find(info.id);
    bool due = seen == memory.status_seen.end() || seen->second != info.status || stale.count(info.id) ||
               refresh_all || (running && now - memory.details_at[info.id] > kRunningDetailsEvery);
    memory.status_seen[info.id] = info.status;
    if (!due) continue;
    memory.details_at[info.id] = now;
    Details d;
    d.params = reader.params(info.id);
    d.tags = reader.tags(info.id);
    for (const core::MetricSummary& s : reader.metric_summaries(info.id))
      if (s.key == kScoreKey && s.count > 0) d.best_score = s.max;
    out.details[info.id] = std::move(d);
  }
  for (int64_t id : watched) {
    Cursor& c = memory.cursors[id];
    auto metrics = reader.metrics(id, c.metrics);
    if (!metrics.empty()) c.metrics = metrics.back().rowid;
    auto events = reader.events(id, c.events);
    if (!events.empty()) c.events = events.back().rowid;
    auto samples = reader.samples(id, c.samples);
    if (!samples.empty()) c.samples = samples.back().rowid;
    if (!metrics.empty()) out.metrics[id] = std::move(metrics);
    if (!events.empty()) out.events[id] = std::move(events);
    if (!samples.empty()) out.samples[id] = std::move(samples);
    out.loaded.insert(id);
  }
}

}  // namespace

const std::vector<double>& MetricSeries::smoothed(double weight) {
  if (smooth_version_ != version || smooth_weight_ != weight) {
    smooth_ = ema_smooth(value, weight);
    smooth_version_ = version;
    smooth_weight_ = weight;
  }
  return smooth_;
}

RunStore::RunStore() = default;
RunStore::~RunStore() { close(); }

void RunStore::open(const std::string& db_path, int poll_ms) {
  close();
  db_path_ = db_path;
  poll_ms_ = poll_ms;
  stop_ = false;
  runs_.clear();
  order_.clear();
  thread_ = std::thread(&RunStore::poll_loop, this);
}

void RunStore::close() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void RunStore::refresh() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    refresh_all_ = true;
  }
  wake_.notify_all();
}

void RunStore::watch(const std::set<int64_t>& ids) {
  bool added = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (int64_t id : ids) added |= !watched_.count(id);
    watched_ = ids;
  }
  if (added) wake_.notify_all();
}

bool RunStore::settled() const {
  std::set<int64_t> watched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!error_.empty()) return true;
    watched = watched_;
  }
  if (!applied_) return false;
  for (int64_t id : watched)
    if (auto it = runs_.find(id); it != runs_.end() && !it->second.metrics_loaded) return false;
  return true;
}

bool RunStore::loading(int64_t id) const {
  auto it = runs_.find(id);
  return it == runs_.end() || !it->second.metrics_loaded;
}

std::string RunStore::error() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

bool RunStore::connected() const {
  std::lock_guard<std::mutex> lock(mu_);
  return connected_;
}

RunData* RunStore::run(int64_t id) {
  auto it = runs_.find(id);
  return it == runs_.end() ? nullptr : &it->second;
}

void RunStore::poll_loop() {
  std::unique_ptr<core::TrackingReader> reader;
  PollMemory memory;
  while (!stop_) {
    std::string error;
    if (!reader) {
      if (!std::filesystem::exists(db_path_)) {
        error = "no tracking database at " + db_path_ + " yet (it appears with the first run)";
      } else {
        try {
          reader = std::make_unique<core::TrackingReader>(db_path_);
        } catch (const std::exception& e) {
          error = std::string(e.what()) + " -- retrying";
        }
      }
    }
    if (reader) {
      FetchedRuns fetched;
      try {
        std::set<int64_t> watched, stale;
        bool refresh_all = false;
        {
          std::lock_guard<std::mutex> lock(mu_);
          watched = watched_;
          stale.swap(stale_details_);
          refresh_all = refresh_all_;
          refresh_all_ = false;
        }
        poll_once(*reader, watched, stale, refresh_all, memory, fetched);
        std::lock_guard<std::mutex> lock(mu_);
        if (!pending_) pending_ = std::make_unique<FetchedRuns>();
        pending_->merge(std::move(fetched));
      } catch (const std::exception& e) {
        error = std::string("cannot read ") + db_path_ + ": " + e.what() + " -- retrying";
        reader.reset();
      }
    }
    std::unique_lock<std::mutex> lock(mu_);
    error_ = error;
    connected_ = reader != nullptr;
    wake_.wait_for(lock, std::chrono::milliseconds(poll_ms_), [&] { return stop_ || refresh_all_; });
  }
}

void RunStore::update() {
  std::unique_ptr<FetchedRuns> fetched;
  {
    std::lock_guard<std::mutex> lock(mu_);
    fetched.swap(pending_);
  }
  if (!fetched) return;
  applied_ = true;
  if (fetched->has_list) {
    std::vector<int64_t> order;
    std::set<int64_t> present;
    for (core::RunInfo& info : fetched->list) {
      order.push_back(info.id);
      present.insert(info.id);
      RunData& run = runs_[info.id];
      if (run.info.status != info.status || run.info.last_step != info.last_step ||
          run.info.name != info.name || run.info.end_time != info.end_time)
        ++run.version;
      run.info = std::move(info);
    }
    for (auto it = runs_.begin(); it != runs_.end();)
      it = present.count(it->first) ? std::next(it) : runs_.erase(it);
    if (order != order_) ++list_version_;
    order_ = std::move(order);
  }
  for (auto& [id, d] : fetched->details) {
    RunData* run = this->run(id);
    if (!run) continue;
    run->params = std::move(d.params);
    run->tags = std::move(d.tags);
    run->best_score = d.best_score;
    ++run->version;
    ++list_version_;
  }
  for (auto& [id, points] : fetched->metrics) {
    RunData* run = this->run(id);
    if (!run) continue;
    std::set<MetricSeries*> touched;
    for (const core::MetricPoint& p : points) {
      MetricSeries& s = run->metrics[p.key];
      if (!s.step.empty() && p.step < s.step.back()) {
        // A step logged out of order: insert it in place (rare; keeps x ascending).
        auto at = std::upper_bound(s.step.begin(), s.step.end(), static_cast<double>(p.step));
        size_t i = static_cast<size_t>(at - s.step.begin());
        s.step.insert(s.step.begin() + i, static_cast<double>(p.step));
        s.wall.insert(s.wall.begin() + i, p.wall_time - run->info.start_time);
        s.value.insert(s.value.begin() + i, p.value);
      } else {
        s.step.push_back(static_cast<double>(p.step));
        s.wall.push_back(p.wall_time - run->info.start_time);
        s.value.push_back(p.value);
      }
      touched.insert(&s);
    }
    for (MetricSeries* s : touched) ++s->version;
    run->points += points.size();
    ++run->version;
  }
  for (auto& [id, events] : fetched->events)
    if (RunData* run = this->run(id)) append(run->events, std::move(events)), ++run->version;
  for (auto& [id, samples] : fetched->samples)
    if (RunData* run = this->run(id)) append(run->samples, std::move(samples)), ++run->version;
  for (int64_t id : fetched->loaded)
    if (RunData* run = this->run(id)) run->metrics_loaded = true;
}

bool RunStore::writable(int64_t id, std::string& error) {
  RunData* run = this->run(id);
  if (!run) {
    error = "no run " + std::to_string(id);
    return false;
  }
  if (run->info.status == "running") {
    error = "run " + std::to_string(id) + " is still running; the GUI does not change a running run";
    return false;
  }
  return true;
}

bool RunStore::change_run(int64_t id, bool details_change,
                          const std::function<void(core::TrackingAdmin&)>& change, std::string& error) {
  if (!writable(id, error)) return false;
  try {
    core::TrackingAdmin admin(db_path_);
    change(admin);
  } catch (const std::exception& e) {
    error = e.what();
    return false;
  }
  if (details_change) {
    std::lock_guard<std::mutex> lock(mu_);
    stale_details_.insert(id);
  }
  refresh();
  return true;
}

bool RunStore::rename_run(int64_t id, const std::string& name, std::string& error) {
  return change_run(
      id, false, [&](core::TrackingAdmin& admin) { admin.rename_run(id, name); }, error);
}

bool RunStore::set_tag(int64_t id, const std::string& key, const std::string& value, std::string& error) {
  return change_run(
      id, true, [&](core::TrackingAdmin& admin) { admin.set_tag(id, key, value); }, error);
}

bool RunStore::remove_tag(int64_t id, const std::string& key, std::string& error) {
  return change_run(
      id, true, [&](core::TrackingAdmin& admin) { admin.remove_tag(id, key); }, error);
}

bool RunStore::delete_runs(const std::vector<int64_t>& ids, std::string& error) {
  for (int64_t id : ids)
    if (!writable(id, error)) return false;
  try {
    core::TrackingAdmin admin(db_path_);
    for (int64_t id : ids) admin.delete_run(id);
  } catch (const std::exception& e) {
    error = e.what();
    refresh();
    return false;
  }
  refresh();
  return true;
}

}  // namespace rlwb::ui
