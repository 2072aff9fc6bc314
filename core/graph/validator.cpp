// validate_experiment: runs every check family and returns what they find in
// file order.
#include <algorithm>

#include "core/graph/checks.h"

namespace rlwb::core {

namespace graph_detail {
KeyLine IssueList::node_line(std::size_t index, const std::string& field) const {
  const NodeSpec& node = nodes_->at(index);
  const std::string path = nodes_path_ + "." + std::to_string(index);
  if (exp_.line_of(path) != node.line) return node.line;  // nodes edited since loading
  return line(field.empty() ? path : path + "." + field);
}
}  // namespace graph_detail

std::vector<GraphIssue> validate_experiment(const Experiment& exp, const MethodCatalog& catalog) {
  std::vector<GraphIssue> issues;
  graph_detail::IssueList out(exp, issues);
  graph_detail::check_resources(out, catalog);
  graph_detail::check_node_calls(out, catalog);
  graph_detail::check_dataflow(out, catalog);
  graph_detail::check_phases(issues, exp, catalog);
  std::stable_sort(issues.begin(), issues.end(), [](const GraphIssue& a, const GraphIssue& b) {
    auto key = [](const GraphIssue& i) { return i.line > 0 ? i.line : INT32_MAX; };
    return key(a) < key(b);
  });
  return issues;
}

}  // namespace rlwb::core
