// The tracking database's tables and how a file is opened: the list of
// migrations that builds the schema version by version, the check that a file
// is an RLWB database of a version this build understands, and the
// connection settings (WAL, bounded busy timeout, fsynced commits). Used by
// the writer, the admin API and the reader; nothing else opens the file.
#pragma once

#include <SQLiteCpp/Database.h>

#include <string>

namespace rlwb::core {

// Version 1: runs, params, metrics, events, artifacts, samples, profiles.
// Version 2: runs.pid + runs.process_start (who owns a running run), tags.
inline constexpr int kTrackingSchemaVersion = 4;

// Lock waits give up after this long (never wait forever on another process).
inline constexpr int kTrackingBusyTimeoutMs = 5000;

// Opens `path` read-write: creates its directory and the file if missing,
// refuses (without touching it) a file that is not an RLWB database or is
// newer than this build, and migrates an older one in one transaction.
SQLite::Database open_tracking_db_for_writing(const std::string& path);

// Opens `path` read-only; it must exist and have the current version.
SQLite::Database open_tracking_db_for_reading(const std::string& path);

// The schema version stored in an open RLWB database.
int tracking_schema_version(SQLite::Database& db);

}  // namespace rlwb::core
