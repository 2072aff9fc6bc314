// folded_stacks() of profile_export.h.
#include "core/profile/context_paths.h"
#include "core/profile/profile_export.h"

#include <cmath>

namespace rlwb::core::profile {

namespace {

// The folded format splits frames at ';' and the count at the last space;
// a frame name may hold neither a ';' nor a line break.
std::string folded_frame_name(const std::string& name) {
  std::string clean = name;
  for (char& c : clean)
    if (c == ';' || c == '\n' || c == '\r') c = '_';
  return clean;
}

}  // namespace

std::string folded_stacks(const RunProfile& profile) {
  const ContextTree tree = profile.merged_tree();
  std::string text;
  for (const ContextPath& path : context_paths(tree)) {
    const int64_t self_us = std::llround(static_cast<double>(path.self_ns) / 1000.0);
    if (self_us <= 0) continue;
    std::string line;
    for (const Frame* frame : path.frames) line += (line.empty() ? "" : ";") + folded_frame_name(frame->name);
    text += line + " " + std::to_string(self_us) + "\n";
  }
  return text;
}

}  // namespace rlwb::core::profile
