// GraphIssue's one-line form and GraphError, which carries every issue.
#include <algorithm>

#include "core/graph/experiment.h"

namespace rlwb::core {

std::string GraphIssue::to_string() const {
  std::string text = file;
  if (line > 0) text += (text.empty() ? "line " : ":") + std::to_string(line);
  if (!text.empty()) text += ": ";
  if (severity == Severity::warning) text += "warning: ";
  if (!node.empty()) text += "node '" + node + "': ";
  if (!phase.empty()) text += "trainer." + phase + ": ";
  text += message;
  if (!hint.empty()) text += " (hint: " + hint + ")";
  return text;
}

bool has_errors(const std::vector<GraphIssue>& issues) {
  return std::any_of(issues.begin(), issues.end(),
                     [](const GraphIssue& issue) { return issue.severity == Severity::error; });
}

namespace {
std::string join_issues(const std::vector<GraphIssue>& issues) {
  std::string text;
  for (const auto& issue : issues) text += (text.empty() ? "" : "\n") + issue.to_string();
  return text;
}
}  // namespace

GraphError::GraphError(std::vector<GraphIssue> issues)
    : std::runtime_error(join_issues(issues)), issues_(std::move(issues)) {}

}  // namespace rlwb::core
