// Which runs of a tracking DB have rows of one kind in the `profiles` table
// (docs/tracking.md), without reading those rows: the GUI lists the runs it
// can show a profile of (core/profile writes a "meta" row first, so
// `runs_with_profile_rows(db, "meta")` is every profiled run, a running one
// included) and offers them as the second run of a diff. A separate reader
// of its own connection, read-only like TrackingReader; the tracking.h
// classes are untouched so that nothing that includes them rebuilds.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace rlwb::core {

// Ids of the runs with at least one `profiles` row of `kind`, ascending.
// Throws TrackingError when the file is missing, not an RLWB database of
// this version, or cannot be read.
std::vector<int64_t> runs_with_profile_rows(const std::string& db_path, const std::string& kind);

}  // namespace rlwb::core
