// Internal to core/graph: the validator's checks, one family per file.
// validate_experiment() runs them all and sorts what they find by line.
#pragma once

#include <string>
#include <vector>

#include "core/graph/experiment.h"

namespace rlwb::core::graph_detail {

// Collects issues for one experiment, with the lines of the keys they are about.
class IssueList {
 public:
  IssueList(const Experiment& exp, std::vector<GraphIssue>& issues) : exp_(exp), issues_(issues) {}

  const Experiment& exp() const { return exp_; }
  // Line of a dotted key path ("pools.main.workers"), or its nearest ancestor.
  int line(const std::string& path) const { return exp_.line_of(path); }
  // Line of a node's field ("in", "out", "call", "" for the node itself);
  // the node's own line when `lines` does not match the nodes any more.
  int node_line(std::size_t index, const std::string& field = "") const;

  void add(int line, const std::string& node, const std::string& message, const std::string& hint,
           Severity severity = Severity::error) {
    issues_.push_back({exp_.file, line, node, message, hint, severity});
  }

 private:
  const Experiment& exp_;
  std::vector<GraphIssue>& issues_;
};

// Pools (size, device, machine capacity), models (role, pool, parallel
// sizes), rewards (type), task, trainer, layout; warnings for keys that
// look like typos of known ones ("node:", "inputs:").
void check_resources(IssueList& out, const MethodCatalog& catalog);
// Node ids and calls (target and method exist).
void check_node_calls(IssueList& out, const MethodCatalog& catalog);
// Columns: read but never written, written twice, cycles.
void check_dataflow(IssueList& out, const MethodCatalog& catalog);

}  // namespace rlwb::core::graph_detail
