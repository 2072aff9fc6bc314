// Experiment's small queries: where (file and line) a key was written, and
// content equality.
#include "core/graph/experiment.h"

#include "core/graph/key_lines.h"

namespace rlwb::core {

std::string nearest_key_with_line(const std::map<std::string, int>& lines, const std::string& path) {
  std::string at = path;
  while (!at.empty() && !lines.count(at)) {
    auto dot = at.rfind('.');
    at = dot == std::string::npos ? std::string() : at.substr(0, dot);
  }
  return at;
}

int Experiment::line_of(const std::string& path) const {
  const std::string at = nearest_key_with_line(lines, path);
  return at.empty() ? 0 : lines.at(at);
}

std::string Experiment::file_of(const std::string& path) const {
  auto it = line_files.find(nearest_key_with_line(lines, path));
  return it == line_files.end() ? file : it->second;
}

const std::vector<std::string>& trainer_phases() {
  static const std::vector<std::string> phases = {"warm_start", "eval"};
  return phases;
}

bool same_content(const Experiment& a, const Experiment& b) {
  auto same_node = [](const NodeSpec& x, const NodeSpec& y) {
    return x.id == y.id && x.call == y.call && x.target == y.target && x.method == y.method && x.in == y.in &&
           x.out == y.out && x.in_ports == y.in_ports && x.out_ports == y.out_ports;
  };
  if (a.nodes.size() != b.nodes.size()) return false;
  for (std::size_t i = 0; i < a.nodes.size(); ++i)
    if (!same_node(a.nodes[i], b.nodes[i])) return false;
  return a.name == b.name && a.algorithm == b.algorithm && a.seed == b.seed && a.pools == b.pools &&
         a.models == b.models && a.rewards == b.rewards && a.task == b.task && a.trainer == b.trainer &&
         a.layout == b.layout && a.raw == b.raw;
}

}  // namespace rlwb::core
