// What a link is in a graph file, and which links the editor may create.
// Links are implicit in the file: node B reads column c that node A writes
// (c in A.out and in B.in). Columns that nodes read but no node writes come
// from the task at the start of each step; the editor draws them as the
// outputs of a "task" box. Pure functions on core::Experiment, shared by the
// canvas and the tests.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/graph/experiment.h"

namespace rlwb::ui {

// The pseudo node id of the task box (not a valid node id in a file: ids
// are YAML text, but the editor never creates one with brackets).
inline constexpr const char* kTaskNode = "[task]";

struct Link {
  std::string from;  // writer node id, or kTaskNode
  std::string column;
  std::string to;    // reader node id
  int to_input = 0;  // index in the reader's `in`
  bool operator==(const Link&) const = default;
};

// column -> the nodes that write it, in node order.
std::map<std::string, std::vector<std::string>> column_writers(const core::Experiment& exp);
// Columns read by some node and written by none, in order of first use.
std::vector<std::string> task_columns(const core::Experiment& exp);
// Every link, in reader order; a column with two writers gives two links.
std::vector<Link> graph_links(const core::Experiment& exp);
// True when `to` depends on `from` through columns (or they are the same node).
bool depends_on(const core::Experiment& exp, const std::string& to, const std::string& from);

struct LinkCheck {
  bool ok = false;
  std::string reason;  // why not, in words for the status line
};

// May output `column` of `from` (a node id or kTaskNode) feed input slot
// `to_input` of node `to`? to_input == -1 (or == in.size()) adds a new input.
// Valid: the reader is another node, no cycle results, the column has
// exactly one writer (the task's columns none), and the reader does not
// already read it.
LinkCheck check_link(const core::Experiment& exp, const std::string& from, const std::string& column,
                     const std::string& to, int to_input);

// Applies a checked link: the reader's input slot takes the column's name
// (or the column is appended as a new input).
void apply_link(core::Experiment& exp, const std::string& column, const std::string& to, int to_input);

// Sets `call` and keeps `target`/`method` in step ("actor.generate").
void set_node_call(core::NodeSpec& node, const std::string& call);

}  // namespace rlwb::ui
