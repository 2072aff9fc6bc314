// Where the frames of a calling-context tree go in the Profile screen's
// icicle (a top-down flame graph): one row per depth, each frame as wide as
// its inclusive wall time, its children below it, left to right from the
// longest. Zooming in on a frame (the focus) makes it the full width; its
// ancestors stay above it as full-width rows, the way back out. Pure layout
// in shares of the width (0..1), no ImGui: icicle_view.h draws it and the
// tests check it. Also the search: which frames a query matches.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/profile/context_tree.h"

namespace rlwb::ui {

struct IcicleBox {
  const core::profile::Frame* frame = nullptr;  // owned by the tree laid out
  std::string path;                             // "gen/generate/aten::mm"; "" for the root
  int depth = 0;                                // row, 0 at the top
  double x0 = 0, x1 = 1;                        // share of the width
  bool ancestor = false;                        // above the focus (a click zooms out to it)
  int parent = -1;                              // index of the box above it; -1 for the root
};

struct IcicleLayout {
  std::vector<IcicleBox> boxes;  // ancestors, the focus, then its descendants, parents first
  const core::profile::Frame* focus = nullptr;
  // The focus as found: the requested names from the root's child down, cut
  // where the tree has no such frame (another run, another worker filter).
  std::vector<std::string> focus_path;
  int rows = 0;
};

// A frame's inclusive wall time; for the root (which measures nothing) the
// sum of its children's.
int64_t frame_wall_ns(const core::profile::Frame& frame);

// Lays `tree` out zoomed on the frame `focus` names (names from the root's
// child down; empty: the root). Frames narrower than `min_share` of the
// focus are left out, with their children.
IcicleLayout layout_icicle(const core::profile::ContextTree& tree, const std::vector<std::string>& focus,
                           double min_share);

// The names from the root's child down to `boxes[index]`: the focus that
// zooms in on it (empty for the root).
std::vector<std::string> focus_of(const IcicleLayout& layout, size_t index);

// The frame at `path` (names from the root's child down), or null.
const core::profile::Frame* find_frame(const core::profile::ContextTree& tree,
                                       const std::vector<std::string>& path);

// Case-insensitive substring match of a frame's name; an empty query matches nothing.
bool frame_matches(const core::profile::Frame& frame, const std::string& query);

struct SearchHits {
  int64_t frames = 0;              // matching frames under the focus (the focus included)
  int64_t wall_ns = 0;             // their wall time, a match inside a match counted once
  double share = 0;                // wall_ns as a share of the focus
  std::vector<std::string> paths;  // the first kMaxPaths matching paths, parents first
  static constexpr size_t kMaxPaths = 20;
};

// The frames under (and including) the layout's focus that match `query`.
SearchHits search_frames(const IcicleLayout& layout, const std::string& query);

}  // namespace rlwb::ui
