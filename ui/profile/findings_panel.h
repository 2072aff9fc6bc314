// The analyzer's findings beside the Profile screen: the list `rlwb
// analyze RUN` prints (core/profile/analyzer.h), best first, each with its
// rule, title, expected gain per step, the evidence and the change to try.
// "copy change" puts the change on the clipboard, for `rlwb run ... --from-run`.
// Recorded items: `profile/findings` (the panel), `profile/finding/<i>`
// (i from 1, in rank order).
#pragma once

#include <vector>

#include "core/profile/analyzer.h"
#include "imgui.h"

namespace rlwb::ui {

void draw_findings_panel(const std::vector<core::profile::Finding>& findings, ImVec2 size);

}  // namespace rlwb::ui
