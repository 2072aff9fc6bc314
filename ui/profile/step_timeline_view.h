// Drawing one step's timeline (step_timeline.h): a time axis, a lane per
// dataflow node with a sub-lane per rank (the bar from dispatch to reply,
// its compute part solid), the nodes of the critical path outlined in gold
// and named in the header, and a row per pool whose gaps (idle time) are
// hatched in red with the pool's idle total. Hovering a bar shows its
// numbers. Recorded items: `timeline/node/<node>`,
// `timeline/rank/<node>/<rank>`, `timeline/pool/<pool>`.
#pragma once

#include <optional>
#include <string>

#include "imgui.h"
#include "ui/profile/step_timeline.h"

namespace rlwb::ui {

struct TimelineOutput {
  std::optional<std::string> hovered;  // "gen rank 1: compute 21.9 ms, reply in at 22.6 ms, 32 rows"
};

TimelineOutput draw_step_timeline(const StepTimelineLayout& layout, ImVec2 size);

}  // namespace rlwb::ui
