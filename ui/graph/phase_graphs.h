// The graphs the editor shows: the step's (`exp.nodes`) and each trainer
// phase's (`exp.phase_nodes`, core::trainer_phases()). A node on the canvas
// is named by its canvas key: its id for a step node, "<phase>/<id>" for a
// phase's node, because a phase may repeat the step's ids. The same keys
// name positions in the file's `layout:` (the validator accepts a phase's
// key when that phase has the node, and refuses step ids that look like
// one). Used by the document, the canvas, the panels and the state dump.
//
// The file's source of a phase's nodes is `trainer.<phase>.nodes` (what the
// writer saves); the editor edits `phase_nodes` and writes the list back
// with save_phase_nodes() at the end of each gesture (GraphDocument).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "ui/graph/link_rules.h"

namespace rlwb::ui {

// Every trainer phase the canvas shows as a group, in order: those with
// nodes of their own (core::trainer_phases()), then the settings-only ones.
const std::vector<std::string>& canvas_phases();
// True for a phase that may hold nodes (warm_start, eval).
bool phase_takes_nodes(const std::string& phase);
// The group's label: "warm start", "eval".
std::string phase_title(const std::string& phase);

// A node of one of the graphs: its phase ("" for the step) and id.
struct NodeRef {
  std::string phase, id;
  bool operator==(const NodeRef&) const = default;
};
std::string canvas_key(const std::string& phase, const std::string& id);
// "eval/eval_gen" -> {eval, eval_gen}; any key without a node phase's
// prefix -> {"", key}.
NodeRef split_canvas_key(const std::string& key);
std::string canvas_key(const NodeRef& ref);

// The step's nodes for "", a phase's otherwise (none when it has none).
const std::vector<core::NodeSpec>& graph_nodes(const core::Experiment& exp, const std::string& phase);
// The graphs that have nodes: "" first (also when empty), then each phase.
std::vector<std::string> graphs_with_nodes(const core::Experiment& exp);
// Every node's canvas key, the step's first, then each phase's in order.
std::vector<std::string> canvas_keys(const core::Experiment& exp);
// The node a canvas key names; null when there is none.
const core::NodeSpec* find_graph_node(const core::Experiment& exp, const std::string& key);
core::NodeSpec* find_graph_node(core::Experiment& exp, const std::string& key);

// An experiment whose `nodes` are the phase's: what link_rules.h and
// node_geometry.h take (they look at nodes, models, rewards and pools).
core::Experiment graph_view(const core::Experiment& exp, const std::string& phase);
// Runs `edit` on the phase's graph_view and keeps the nodes it leaves
// (for "" it edits `exp` itself).
void edit_graph(core::Experiment& exp, const std::string& phase,
                const std::function<void(core::Experiment&)>& edit);
// Every link of every graph, with canvas keys in `from`/`to` (a phase's
// task box is canvas_key(phase, kTaskNode)).
std::vector<Link> canvas_links(const core::Experiment& exp);

// Writes phase_nodes[phase] into trainer.<phase>.nodes (each node's keys
// the editor does not know, as the file had them, kept); removes the key
// when the phase has no nodes left.
void save_phase_nodes(core::Experiment& exp, const std::string& phase);

// One line per setting of trainer.<phase> other than its nodes ("every:
// 50"), each at most `max_chars`; "not set" when the file has no such key.
std::vector<std::string> phase_summary(const core::Experiment& exp, const std::string& phase,
                                       size_t max_chars = 34);

}  // namespace rlwb::ui
