// Internal to core/validate: the validator's checks, one family per file.
// validate_experiment() runs them all and sorts what they find by line.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "core/validate/validator.h"

namespace rlwb::core::graph_detail {

// A line and the file it is in: a key of a base file (`defaults:`) is
// reported in that file. Converts from and to the line alone, so a check
// can pass a line number where it has no key path.
struct KeyLine {
  int line = 0;
  std::string file;  // "": the experiment's own file
  KeyLine(int line = 0, std::string file = "") : line(line), file(std::move(file)) {}
  operator int() const { return line; }
};

// Collects issues for one experiment, with the lines of the keys they are
// about. Node checks look at one list of nodes: the graph's (`nodes`), or a
// trainer phase's (`trainer.eval.nodes`), whose issues then carry the phase.
class IssueList {
 public:
  IssueList(const Experiment& exp, std::vector<GraphIssue>& issues)
      : exp_(exp), issues_(issues), nodes_(&exp.nodes), nodes_path_("nodes") {}
  // For the nodes of trainer.<phase>.
  IssueList(const Experiment& exp, std::vector<GraphIssue>& issues, const std::string& phase)
      : exp_(exp),
        issues_(issues),
        nodes_(&exp.phase_nodes.at(phase)),
        nodes_path_("trainer." + phase + ".nodes"),
        phase_(phase) {}

  const Experiment& exp() const { return exp_; }
  // The nodes under check, and the key path of their list.
  const std::vector<NodeSpec>& nodes() const { return *nodes_; }
  const std::string& nodes_path() const { return nodes_path_; }
  // Line of a dotted key path ("pools.main.workers"), or its nearest ancestor.
  KeyLine line(const std::string& path) const { return {exp_.line_of(path), exp_.file_of(path)}; }
  // Line of a node's field ("in", "out", "call", "" for the node itself);
  // the node's own line when `lines` does not match the nodes any more.
  KeyLine node_line(std::size_t index, const std::string& field = "") const;

  void add(const KeyLine& line, const std::string& node, const std::string& message, const std::string& hint,
           Severity severity = Severity::error) {
    issues_.push_back(
        {line.file.empty() ? exp_.file : line.file, line.line, node, message, hint, severity, phase_});
  }

 private:
  const Experiment& exp_;
  std::vector<GraphIssue>& issues_;
  const std::vector<NodeSpec>* nodes_;
  std::string nodes_path_;
  std::string phase_;  // "" for the graph's own nodes
};

// Pools (size, device, machine capacity), models (role, pool, parallel
// sizes), rewards (type), the task's name, layout. (Unknown keys and every
// setting's type and range: core/config, run by validate_experiment.)
void check_resources(IssueList& out, const MethodCatalog& catalog);
// Node ids and calls (target and method exist), and the ports the node
// binds (each one the callee has, every required input bound).
void check_node_calls(IssueList& out, const MethodCatalog& catalog);
// Columns: read but never written, written twice, cycles.
void check_dataflow(IssueList& out, const MethodCatalog& catalog);
// Trainer phases: their nodes (calls and columns, as above, on the task's
// columns), and the models and columns their other keys name.
void check_phases(std::vector<GraphIssue>& issues, const Experiment& exp, const MethodCatalog& catalog);

}  // namespace rlwb::core::graph_detail
