// Which row each pin of a node is drawn in, so that links cross as little
// as the node positions allow. The file's order of a node's `in` and `out`
// is kept (it is what the user wrote, and a variadic builtin reads its
// inputs in it); only where each pin is drawn changes:
//   - a node's outputs go top to bottom by where their readers are (the
//     mean height of the reading nodes; unread outputs last);
//   - its inputs by where the pins they come from are (the writer's output
//     pin, or the task box's; inputs no one writes last);
//   - the task box's outputs like a node's.
// Both orders are stable: pins that tie keep the file's order. The pins'
// world coordinates are computed here too, so the canvas, the crossing
// count and the tests agree. No ImGui.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "ui/graph/graph_document.h"

namespace rlwb::ui {

struct PinRows {
  std::vector<size_t> in, out;  // in[i]: the row of node.in[i]
};

// The rows of every node of one graph (the step's for phase "", else that
// phase's), by node id, and of the task box's outputs (task_columns order).
// `pos` is keyed by canvas key (phase_graphs.h).
struct GraphPinRows {
  std::map<std::string, PinRows> nodes;
  std::vector<size_t> task;
  const PinRows& of(const std::string& id) const;  // identity rows when unknown
};
GraphPinRows order_pins(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                        const std::string& phase);
// Every pin in the file's order (what the canvas drew before pins were ordered).
GraphPinRows file_order_pins(const core::Experiment& exp, const std::string& phase);

// Where a pin in `row` sits, in world units: an input on the box's left
// edge, an output on its right; a task-box output on the task box's right.
// `graph` is any experiment with the node's model, reward and pools.
Vec2 input_pin(const core::Experiment& graph, const core::NodeSpec& node, Vec2 at, size_t row);
Vec2 output_pin(const core::Experiment& graph, const core::NodeSpec& node, Vec2 at, size_t row);
Vec2 task_pin(Vec2 task_box_corner, size_t row);

// Pairs of links (straight, pin to pin) that cross when pins sit in `rows`.
size_t link_crossings(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                      const std::string& phase, const GraphPinRows& rows);

}  // namespace rlwb::ui
