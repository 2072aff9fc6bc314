// The calling contexts of a profile as a flat list: one entry per path of a
// context tree (node -> method -> operator ...), with the path's own (self)
// and inclusive metrics. Every reader of a stored profile starts here -- the
// hot-context report, the folded-stack and pprof exports, the diff and the
// analyzer's operator rules -- so they agree on what a context and its self
// time are. No LibTorch.
#pragma once

#include "core/profile/run_profile.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rlwb::core::profile {

struct ContextPath {
  std::vector<const Frame*> frames;  // from the dataflow node down to this context; owned by the tree
  int64_t self_ns = 0;               // wall time in this frame and not in a child
  int64_t total_ns = 0;              // wall time in this frame, children included
  int64_t calls = 0;
  int64_t self_bytes = 0;  // allocated while this frame was the innermost one

  const Frame& leaf() const { return *frames.back(); }
  const std::string& node() const { return frames.front()->name; }  // the dataflow node
  std::string label(const char* separator = "/") const { return path_label(frames, separator); }
};

// Every path of `tree`, parents first (the order of ContextTree::walk). The
// entries point into `tree`, which must outlive them.
std::vector<ContextPath> context_paths(const ContextTree& tree, const std::string& node = "");

// The windows of the workers that `worker` selects (worker_matches), merged
// path by path.
ContextTree filtered_tree(const RunProfile& profile, const std::string& worker);

// A worker id matches a filter "main" (its pool) or "main/1" (itself), and
// never "main/10" for "main/1".
bool worker_matches(const std::string& worker, const std::string& filter);

// The number of steps the stored trees cover (the union of the windows'
// steps), or the number of StepTimings when there are no trees: what "per
// step" divides by.
int64_t profiled_step_count(const RunProfile& profile);

}  // namespace rlwb::core::profile
