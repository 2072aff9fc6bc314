// Where the trainer phases sit on the canvas, in world units: a phase with
// nodes is a labelled frame around its nodes and its task box (drawn like
// the step's); a phase without nodes (samples, save) is a small box listing
// its settings, in a row below everything else. A phase the file does not
// set is not shown. Also where each graph's task box goes. The canvas draws these, the
// auto layout keeps the frames apart, the state dump records them. No ImGui.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "ui/graph/graph_document.h"

namespace rlwb::ui {

// Around a phase's boxes, and the band above them that holds its title.
constexpr float kGroupPad = 20, kGroupTitle = 30;
// Between one graph's block and the next group's frame.
constexpr float kGroupGap = 50;

struct WorldRect {
  Vec2 min, max;
  bool overlaps(const WorldRect& o) const {
    return min.x < o.max.x && max.x > o.min.x && min.y < o.max.y && max.y > o.min.y;
  }
};

// The task box of a graph ("" the step's, or a phase's): left of its
// leftmost node, level with its topmost; none when no column comes from
// the task. `pos` is keyed by canvas key (phase_graphs.h).
std::optional<WorldRect> task_box(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                                  const std::string& phase);
// The graph's node boxes and task box together; none without nodes.
std::optional<WorldRect> graph_bounds(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                                      const std::string& phase);

struct PhaseGroup {
  std::string phase;                 // "eval"
  std::string title;                 // "eval"
  std::vector<std::string> summary;  // its settings (phase_summary)
  bool has_nodes = false;            // a frame around nodes, else a settings box
  WorldRect frame;                   // the whole group, title band included
};

// Every phase of canvas_phases() that the file sets or that has nodes, in that order.
std::vector<PhaseGroup> phase_groups(const core::Experiment& exp, const std::map<std::string, Vec2>& pos);

}  // namespace rlwb::ui
