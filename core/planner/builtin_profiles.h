// The device profiles shipped with RLWB (core/planner/devices/*.json),
// compiled in by core/CMakeLists.txt so that `rlwb plan` finds them
// wherever it is installed. Read through device_profile.h.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace rlwb::core::planner {

// (file stem, JSON text) of each shipped profile, sorted by stem.
const std::vector<std::pair<std::string, std::string>>& builtin_profile_texts();

}  // namespace rlwb::core::planner
