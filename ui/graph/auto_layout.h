// Automatic layout of a graph's nodes through Graphviz's layered layout
// (dot: ranking, then ordering within ranks to cut crossings), left to
// right as the canvas draws data: a node's inputs on its left, outputs on
// its right, so every link runs from a lower rank to a higher one. Boxes
// have the canvas's sizes (node_geometry.h) and never overlap. Used by
// GraphDocument: for a file without positions and on the editor's
// "Auto layout" action.
#pragma once

#include <map>
#include <string>

#include "core/graph/experiment.h"
#include "ui/graph/graph_document.h"

namespace rlwb::ui {

// The gaps the layout keeps, in world units.
constexpr float kLayoutRankGap = 110;  // between ranks (columns): room for the links
constexpr float kLayoutNodeGap = 36;   // between boxes in one rank

// Top-left corner of every node's box by canvas key (phase_graphs.h): the
// step's graph right of x0 and below y0 (room for the task box, drawn left
// of the leftmost node), each phase's below it. Deterministic: the same
// graph gives the same positions.
std::map<std::string, Vec2> auto_layout(const core::Experiment& exp, float x0 = 260, float y0 = 40);
// One graph ("" the step's, or a phase's), keyed by canvas key, right of
// x0 and below y0.
std::map<std::string, Vec2> auto_layout_graph(const core::Experiment& exp, const std::string& phase, float x0,
                                              float y0);
// Where the frame of a phase's block laid out below `pos` may start: under
// every box and frame placed so far, with the gap groups keep.
float next_block_top(const core::Experiment& exp, const std::map<std::string, Vec2>& pos, float y0);

}  // namespace rlwb::ui
