#include "ui/graph/link_rules.h"

#include <algorithm>
#include <set>

namespace rlwb::ui {
namespace {

const core::NodeSpec* find_node(const core::Experiment& exp, const std::string& id) {
  for (const auto& n : exp.nodes)
    if (n.id == id) return &n;
  return nullptr;
}

bool contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

}  // namespace

std::map<std::string, std::vector<std::string>> column_writers(const core::Experiment& exp) {
  std::map<std::string, std::vector<std::string>> writers;
  for (const auto& node : exp.nodes)
    for (const auto& column : node.out)
      if (!contains(writers[column], node.id)) writers[column].push_back(node.id);
  return writers;
}

std::vector<std::string> task_columns(const core::Experiment& exp) {
  auto writers = column_writers(exp);
  std::vector<std::string> columns;
  for (const auto& node : exp.nodes)
    for (const auto& column : node.in)
      if (!writers.count(column) && !contains(columns, column)) columns.push_back(column);
  return columns;
}

std::vector<Link> graph_links(const core::Experiment& exp) {
  auto writers = column_writers(exp);
  std::vector<Link> links;
  for (const auto& node : exp.nodes) {
    for (size_t i = 0; i < node.in.size(); ++i) {
      auto it = writers.find(node.in[i]);
      if (it == writers.end()) {
        links.push_back({kTaskNode, node.in[i], node.id, static_cast<int>(i)});
      } else {
        for (const auto& writer : it->second)
          links.push_back({writer, node.in[i], node.id, static_cast<int>(i)});
      }
    }
  }
  return links;
}

bool depends_on(const core::Experiment& exp, const std::string& to, const std::string& from) {
  if (to == from) return true;
  auto writers = column_writers(exp);
  std::set<std::string> seen{to};
  std::vector<std::string> stack{to};
  while (!stack.empty()) {
    const core::NodeSpec* node = find_node(exp, stack.back());
    stack.pop_back();
    if (!node) continue;
    for (const auto& column : node->in) {
      auto it = writers.find(column);
      if (it == writers.end()) continue;
      for (const auto& writer : it->second) {
        if (writer == from) return true;
        if (seen.insert(writer).second) stack.push_back(writer);
      }
    }
  }
  return false;
}

LinkCheck check_link(const core::Experiment& exp, const std::string& from, const std::string& column,
                     const std::string& to, int to_input) {
  const core::NodeSpec* reader = find_node(exp, to);
  if (!reader) return {false, "no node '" + to + "'"};
  if (to_input < -1 || to_input > static_cast<int>(reader->in.size()))
    return {false, "node '" + to + "' has no input slot " + std::to_string(to_input)};
  auto writers = column_writers(exp);
  auto it = writers.find(column);
  if (from == kTaskNode) {
    if (it != writers.end())
      return {false, "column '" + column + "' is written by node '" + it->second[0] + "', not by the task"};
  } else {
    const core::NodeSpec* writer = find_node(exp, from);
    if (!writer) return {false, "no node '" + from + "'"};
    if (!contains(writer->out, column))
      return {false, "node '" + from + "' does not write column '" + column + "'"};
    if (it != writers.end() && it->second.size() > 1)
      return {false, "column '" + column + "' has more than one writer ('" + it->second[0] + "', '" +
                         it->second[1] + "'); a column has one writer"};
    if (from == to) return {false, "node '" + to + "' cannot read its own output"};
    if (depends_on(exp, from, to))
      return {false, "linking '" + from + "' into '" + to + "' would make a cycle ('" + from +
                         "' already depends on '" + to + "')"};
  }
  for (size_t i = 0; i < reader->in.size(); ++i)
    if (reader->in[i] == column && static_cast<int>(i) != to_input)
      return {false, "node '" + to + "' already reads column '" + column + "'"};
  if (to_input >= 0 && to_input < static_cast<int>(reader->in.size()) && reader->in[to_input] == column)
    return {false, "this link exists"};
  if (contains(reader->out, column))
    return {false, "node '" + to + "' writes column '" + column + "' itself"};
  return {true, ""};
}

void apply_link(core::Experiment& exp, const std::string& column, const std::string& to, int to_input) {
  for (auto& node : exp.nodes) {
    if (node.id != to) continue;
    if (to_input < 0 || to_input >= static_cast<int>(node.in.size())) {
      node.in.push_back(column);  // a new input: the port of the column's name
      if (!node.in_ports.empty()) node.in_ports.push_back(column);
    } else {
      // The slot keeps its port: a column named otherwise binds through the map form.
      if (node.in_ports.empty() && node.in[to_input] != column) node.in_ports = node.in;
      node.in[to_input] = column;
    }
  }
}

void set_node_call(core::NodeSpec& node, const std::string& call) {
  node.call = call;
  auto dot = call.find('.');
  node.target = call.substr(0, dot);
  node.method = dot == std::string::npos ? "" : call.substr(dot + 1);
}

}  // namespace rlwb::ui
