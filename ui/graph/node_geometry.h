// The size of a node's box on the canvas, in world units (the layout's
// coordinates): the canvas draws boxes this size and the auto layout keeps
// boxes this size apart, so the two cannot disagree. No ImGui here.
#pragma once

#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "ui/graph/graph_document.h"

namespace rlwb::ui {

constexpr float kNodeWidth = 190, kNodeHeader = 40, kNodeInfoLine = 17, kPinRow = 20, kTaskWidth = 170;
// A pin label's width per character, rounded up from DejaVu Sans at the
// labels' 13.5 px; the canvas checks it against the real font (it records
// `label_collision/<node>` where an input's and an output's labels meet).
constexpr float kPinLabelCharWidth = 8;
// Between a pin and its label, and between an input's and an output's label.
constexpr float kPinLabelInset = 9, kPinLabelGap = 14;

// What a pin shows: its column, or "port: column" where they differ.
std::string pin_label(const std::string& port, const std::string& column);
float pin_label_width(const std::string& label);

// The lines under a node's title: where it runs and how it is split.
std::vector<std::string> info_lines(const core::Experiment& exp, const core::NodeSpec& node);

// Where a node's pin rows start, below its title and info lines.
float pins_top(const core::Experiment& exp, const core::NodeSpec& node);

// The node's box: kNodeWidth wide, wider when its widest input and widest
// output labels need it side by side; tall enough for its info lines and one row per input
// (plus the "add input" row) or per output, whichever is more.
Vec2 node_size(const core::Experiment& exp, const core::NodeSpec& node);

}  // namespace rlwb::ui
