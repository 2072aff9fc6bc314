// validate_experiment: runs every check family and returns what they find in
// file order.
#include <algorithm>
#include <optional>

#include "core/config/experiment_options.h"
#include "core/validate/checks.h"

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

// The node (id, and trainer phase or "") a settings path is about:
// "nodes.3.ins" -> the fourth node of the graph, "trainer.eval.nodes.0.x"
// -> the first eval node; {"", ""} for any other path.
std::pair<std::string, std::string> node_of_path(const Experiment& exp, const std::string& path) {
  auto index_after = [&](const std::string& prefix, size_t count) -> std::optional<size_t> {
    if (path.rfind(prefix, 0) != 0) return std::nullopt;
    const size_t end = path.find('.', prefix.size());
    const std::string index =
        path.substr(prefix.size(), end == std::string::npos ? std::string::npos : end - prefix.size());
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
    const size_t i = std::stoul(index);
    return i < count ? std::optional<size_t>(i) : std::nullopt;
  };
  if (auto i = index_after("nodes.", exp.nodes.size())) return {exp.nodes[*i].id, ""};
  for (const auto& [phase, nodes] : exp.phase_nodes)
    if (auto i = index_after("trainer." + phase + ".nodes.", nodes.size())) return {nodes[*i].id, phase};
  return {"", ""};
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
  const config::ExperimentOptions options = config::parse_experiment_options(exp, settings);
  for (const auto& p : settings.problems()) {
    auto [node, phase] = node_of_path(exp, p.path);
    issues.push_back(
        {exp.file_of(p.path), p.line, node, p.path + ": " + p.message, p.hint, Severity::error, phase});
  }
  // What the task's files hold, once its settings are right.
  if (auto check = catalog.task_checks.find(options.task.name);
      settings.ok() && check != catalog.task_checks.end()) {
    try {
      check->second(options.task);
    } catch (const std::exception& e) {
      issues.push_back({exp.file_of("task"), exp.line_of("task"), "", std::string("task: ") + e.what(),
                        "fix the file or the task's settings (docs/data.md)", Severity::error, ""});
    }
  }
  std::stable_sort(issues.begin(), issues.end(), [](const GraphIssue& a, const GraphIssue& b) {
    auto key = [](const GraphIssue& i) { return i.line > 0 ? i.line : INT32_MAX; };
    return key(a) < key(b);
  });
  return issues;
}

}  // namespace rlwb::core
