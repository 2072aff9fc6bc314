// validate_experiment: runs every check family and returns what they find in
// file order.
#include <algorithm>

#include "core/config/experiment_options.h"
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

namespace {

// The id of the node a settings path is about ("nodes.3.ins" -> the fourth
// node's id), "" for any other path.
std::string node_of_path(const Experiment& exp, const std::string& path) {
  if (path.rfind("nodes.", 0) != 0) return "";
  const size_t end = path.find('.', 6);
  const std::string index = path.substr(6, end == std::string::npos ? std::string::npos : end - 6);
  if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) return "";
  const size_t i = std::stoul(index);
  return i < exp.nodes.size() ? exp.nodes[i].id : "";
}

}  // namespace

std::vector<GraphIssue> validate_experiment(const Experiment& exp, const MethodCatalog& catalog) {
  std::vector<GraphIssue> issues;
  graph_detail::IssueList out(exp, issues);
  graph_detail::check_resources(out, catalog);
  graph_detail::check_node_calls(out, catalog);
  graph_detail::check_dataflow(out, catalog);
  graph_detail::check_phases(issues, exp, catalog);
  // Every setting, typed: unknown keys, types, ranges, enum names and the
  // rules between settings (core/config).
  config::ParseContext settings(&exp.lines);
  config::parse_experiment_options(exp, settings);
  for (const auto& p : settings.problems())
    issues.push_back({exp.file, p.line, node_of_path(exp, p.path), p.path + ": " + p.message, p.hint});
  std::stable_sort(issues.begin(), issues.end(), [](const GraphIssue& a, const GraphIssue& b) {
    auto key = [](const GraphIssue& i) { return i.line > 0 ? i.line : INT32_MAX; };
    return key(a) < key(b);
  });
  return issues;
}

}  // namespace rlwb::core
