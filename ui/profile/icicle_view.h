// Drawing the icicle (icicle_layout.h) with ImDrawList, and what a person
// does with it: hover a frame for its metrics (a tooltip; the same numbers
// go to the state dump), click a frame to zoom in on it, click a row above
// the focus, right-click or press Escape to zoom back out. Colour says the
// frame's kind (node, method, operator, native, kernel) or, in diff mode,
// how its self time changed (icicle_diff.h); with a search, matching frames
// are outlined and the rest dimmed. Every frame drawn is a recorded item,
// `profile/frame/<path>` ("profile/frame/gen/generate"; the root is
// `profile/frame/all`).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/profile/context_tree.h"
#include "imgui.h"
#include "ui/profile/icicle_diff.h"
#include "ui/profile/icicle_layout.h"

namespace rlwb::ui {

// The hovered frame as the tooltip shows it (copied: it outlives a reload).
struct HoveredFrame {
  std::string path;  // "" for the root
  std::string name, kind;
  core::profile::FrameMetrics metrics;
  int64_t self_ns = 0;
  int64_t bytes = 0;  // allocated under it, descendants included
  std::map<std::string, int64_t> shapes;
  int64_t steps = 1;                 // what "per step" divides by
  std::optional<PathChange> change;  // diff mode
};

struct IcicleInput {
  const IcicleLayout* layout = nullptr;
  std::string search;
  const IcicleDiff* diff = nullptr;  // null: colour by kind
  int64_t steps = 1;                 // the profile's profiled steps
};

struct IcicleOutput {
  std::optional<HoveredFrame> hovered;
  std::optional<std::vector<std::string>> zoom_to;  // a new focus
  bool zoom_out = false;                            // one level up
  int boxes_drawn = 0;
};

inline constexpr float kIcicleRowHeight = 22;

// The icicle in a region `size` large at the cursor (scrolls vertically when
// deeper than that).
IcicleOutput draw_icicle(const IcicleInput& in, ImVec2 size);

// The tooltip's text lines for a frame (tested without a window).
std::vector<std::string> hovered_frame_lines(const HoveredFrame& frame);
HoveredFrame describe_frame(const core::profile::Frame& frame, const std::string& path, int64_t steps,
                            const IcicleDiff* diff);

}  // namespace rlwb::ui
