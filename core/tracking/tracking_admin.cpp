// TrackingAdmin: changes to recorded runs from the CLI/GUI, made next to a
// live controller. Each call is one short IMMEDIATE transaction, so it waits
// (at most the busy timeout) for the writer's current batch and never leaves
// a half-done change.
#include <SQLiteCpp/Statement.h>
#include <SQLiteCpp/Transaction.h>

#include <mutex>

#include "core/tracking/process_identity.h"
#include "core/tracking/run_end.h"
#include "core/tracking/schema.h"
#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

struct RunOwner {
  std::string status, host;
  int64_t pid = 0;
  std::string process_start;
};

}  // namespace

struct TrackingAdmin::Impl {
  std::string path;
  std::mutex mutex;
  SQLite::Database db;

  explicit Impl(const std::string& db_path) : path(db_path), db(open_tracking_db_for_writing(db_path)) {}

  // Runs `change` in one transaction; SQLite errors become TrackingErrors.
  template <class Change>
  auto in_transaction(const std::string& what, Change change) {
    std::lock_guard lock(mutex);
    try {
      SQLite::Transaction transaction(db, SQLite::TransactionBehavior::IMMEDIATE);
      auto result = change();
      transaction.commit();
      return result;
    } catch (const SQLite::Exception& e) {
      throw TrackingError(path + ": " + what + " failed: " + e.what());
    }
  }

  RunOwner owner_of(int64_t run) {
    SQLite::Statement query(db, "SELECT status, host, pid, process_start FROM runs WHERE id = ?");
    query.bind(1, run);
    if (!query.executeStep()) {
      throw TrackingError(path + ": there is no run " + std::to_string(run));
    }
    return {query.getColumn(0).getString(), query.getColumn(1).getString(), query.getColumn(2).getInt64(),
            query.getColumn(3).getString()};
  }
};

TrackingAdmin::TrackingAdmin(const std::string& db_path) : impl_(std::make_unique<Impl>(db_path)) {}

TrackingAdmin::~TrackingAdmin() = default;

void TrackingAdmin::rename_run(int64_t run, const std::string& name) {
  if (name.empty()) throw TrackingError("a run needs a name");
  impl_->in_transaction("renaming run " + std::to_string(run), [&] {
    impl_->owner_of(run);
    SQLite::Statement update(impl_->db, "UPDATE runs SET name = ? WHERE id = ?");
    update.bind(1, name);
    update.bind(2, run);
    return update.exec();
  });
}

void TrackingAdmin::set_tag(int64_t run, const std::string& key, const std::string& value) {
  if (key.empty()) throw TrackingError("a tag needs a key");
  impl_->in_transaction("tagging run " + std::to_string(run), [&] {
    impl_->owner_of(run);
    SQLite::Statement upsert(impl_->db,
                             "INSERT INTO tags (run_id, key, value) VALUES (?, ?, ?) "
                             "ON CONFLICT (run_id, key) DO UPDATE SET value = excluded.value");
    upsert.bind(1, run);
    upsert.bind(2, key);
    upsert.bind(3, value);
    return upsert.exec();
  });
}

void TrackingAdmin::remove_tag(int64_t run, const std::string& key) {
  impl_->in_transaction("untagging run " + std::to_string(run), [&] {
    impl_->owner_of(run);
    SQLite::Statement remove(impl_->db, "DELETE FROM tags WHERE run_id = ? AND key = ?");
    remove.bind(1, run);
    remove.bind(2, key);
    return remove.exec();
  });
}

void TrackingAdmin::delete_run(int64_t run) {
  impl_->in_transaction("deleting run " + std::to_string(run), [&] {
    const RunOwner owner = impl_->owner_of(run);
    if (owner.status == "running") {
      const bool ours_to_check = owner.host == current_process_identity().host;
      if (!ours_to_check || process_is_running(owner.pid, owner.process_start)) {
        throw TrackingError(impl_->path + ": run " + std::to_string(run) + " is still running (pid " +
                            std::to_string(owner.pid) + " on " + owner.host +
                            "); stop it, or mark it ended, before deleting it");
      }
    }
    for (const char* table : {"params", "metrics", "events", "artifacts", "samples", "profiles", "tags"}) {
      SQLite::Statement remove(impl_->db, std::string("DELETE FROM ") + table + " WHERE run_id = ?");
      remove.bind(1, run);
      remove.exec();
    }
    SQLite::Statement remove_run(impl_->db, "DELETE FROM runs WHERE id = ?");
    remove_run.bind(1, run);
    return remove_run.exec();
  });
}

void TrackingAdmin::mark_run_ended(int64_t run, const std::string& status, const std::string& error) {
  require_end_status(status);
  impl_->in_transaction("ending run " + std::to_string(run), [&] {
    const RunOwner owner = impl_->owner_of(run);
    if (owner.status != "running") {
      throw TrackingError(impl_->path + ": run " + std::to_string(run) + " already ended as '" +
                          owner.status + "'");
    }
    record_run_end(impl_->db, run, status, error, "tracking");
    return 0;
  });
}

std::vector<int64_t> TrackingAdmin::mark_stale_runs(const std::string& status) {
  require_end_status(status);
  const ProcessIdentity self = current_process_identity();
  return impl_->in_transaction("marking dead runs", [&] {
    // pid 0: a run recorded before owners were (schema 1); nothing to check.
    SQLite::Statement query(impl_->db,
                            "SELECT id, pid, process_start FROM runs "
                            "WHERE status = 'running' AND host = ? AND pid > 0");
    query.bind(1, self.host);
    std::vector<int64_t> stale;
    std::vector<int64_t> stale_pids;
    while (query.executeStep()) {
      const int64_t pid = query.getColumn(1).getInt64();
      if (!process_is_running(pid, query.getColumn(2).getString())) {
        stale.push_back(query.getColumn(0).getInt64());
        stale_pids.push_back(pid);
      }
    }
    query.reset();
    for (size_t i = 0; i < stale.size(); ++i) {
      record_run_end(impl_->db, stale[i], status,
                     "the controller process (pid " + std::to_string(stale_pids[i]) + " on " + self.host +
                         ") exited without ending this run: it crashed or was killed",
                     "tracking");
    }
    return stale;
  });
}

}  // namespace rlwb::core
