// The editor's Plan panel (the toolbar's "Plan..."): a window over the
// canvas that asks for the devices, nodes, device profile and largest
// pipeline size, lists the ranked placements of the open experiment
// (step time, tokens/s, which models share which device set, each model's
// dp/tp/pp, memory per device), shows the selected plan's per-node
// breakdown, and applies it to the document as one undoable edit. The live
// validation then checks the new pools like any other edit. The state is
// GraphEditor::plan (plan_session.h); this file only draws it.
//
// Recorded items (item_registry.h), for scripts and tests:
//   plan/devices  plan/nodes  plan/profile  plan/profile/<name>  plan/max_pp
//   button/Search  plan/row/<rank>  button/Apply plan  button/Close plan
//   plan/error  plan/note  plan/summary  plan/stale  plan/window
#pragma once

#include "ui/graph/graph_editor.h"

namespace rlwb::ui {

// Opens the panel (its devices start as the experiment's pools' workers).
void open_plan_panel(GraphEditor& editor);
// Draws it when open; call once a frame after the editor.
void draw_plan_panel(GraphEditor& editor);

}  // namespace rlwb::ui
