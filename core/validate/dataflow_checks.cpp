// Checks of the columns that flow between nodes. A node runs when all its
// input columns exist; they come from the task (at the start of a step) or
// from the one node that writes them. So every input needs a writer, every
// column has at most one, and the writer -> reader edges must not loop.
#include <algorithm>
#include <map>

#include "core/validate/checks.h"
#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

constexpr int kTask = -1;  // writer index of a column the task provides

struct Columns {
  std::string task_name;
  std::map<std::string, std::vector<int>> writers;  // column -> writers (kTask or node index)
};

Columns collect_writers(IssueList& out, const MethodCatalog& catalog) {
  const Experiment& exp = out.exp();
  const std::vector<NodeSpec>& nodes = out.nodes();
  Columns columns;
  if (exp.task.contains("name") && exp.task["name"].is_string())
    columns.task_name = exp.task["name"].get<std::string>();
  if (auto it = catalog.task_columns.find(columns.task_name); it != catalog.task_columns.end())
    for (const auto& column : it->second) columns.writers[column].push_back(kTask);

  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeSpec& node = nodes[i];
    for (const auto& column : node.out) {
      auto& writers = columns.writers[column];
      if (!writers.empty()) {
        const int first = writers.front();
        if (first == kTask)
          out.add(out.node_line(i, "out"), node.id,
                  "writes column '" + column + "' that the task '" + columns.task_name + "' already provides",
                  "read it from the task, or give the output another name");
        else if (first == static_cast<int>(i))
          out.add(out.node_line(i, "out"), node.id, "lists column '" + column + "' twice in out",
                  "list each output once");
        else
          out.add(out.node_line(i, "out"), node.id,
                  "writes column '" + column + "' that node '" + nodes[first].id + "' (line " +
                      std::to_string(out.node_line(first)) + ") writes too",
                  "a column has one writer: rename one output and the inputs that mean it");
      }
      writers.push_back(static_cast<int>(i));
    }
  }
  return columns;
}

std::string writer_name(const std::vector<NodeSpec>& nodes, const Columns& columns, int writer) {
  return writer == kTask ? "the task '" + columns.task_name + "'" : "node '" + nodes[writer].id + "'";
}

void check_inputs(IssueList& out, const Columns& columns) {
  const std::vector<NodeSpec>& nodes = out.nodes();
  std::vector<std::string> written;
  for (const auto& [column, _] : columns.writers) written.push_back(column);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeSpec& node = nodes[i];
    for (const auto& column : node.in) {
      if (columns.writers.count(column)) continue;
      std::string hint;
      for (const auto& similar : similar_names(column, written))
        hint += std::string(hint.empty() ? "did you mean " : ", or ") + "'" + similar + "' (written by " +
                writer_name(nodes, columns, columns.writers.at(similar).front()) + ")";
      if (hint.empty()) {
        hint = "add a node that writes it";
        if (!columns.task_name.empty()) {
          std::vector<std::string> from_task;
          for (const auto& [name, writers] : columns.writers)
            if (writers.front() == kTask) from_task.push_back(name);
          hint +=
              ", or read a column the task '" + columns.task_name + "' provides: " + list_names(from_task);
        }
      } else {
        hint += "?";
      }
      out.add(out.node_line(i, "in"), node.id, "reads column '" + column + "' that no node writes", hint);
    }
  }
}

// Writer -> reader edges between nodes, each with the column it carries.
struct Edge {
  int to;
  std::string column;
};

std::vector<std::vector<Edge>> build_edges(const std::vector<NodeSpec>& nodes, const Columns& columns) {
  std::vector<std::vector<Edge>> edges(nodes.size());
  for (std::size_t reader = 0; reader < nodes.size(); ++reader)
    for (const auto& column : nodes[reader].in)
      if (auto it = columns.writers.find(column); it != columns.writers.end())
        for (int writer : it->second)
          if (writer != kTask) edges[writer].push_back({static_cast<int>(reader), column});
  return edges;
}

// Strongly connected components (Tarjan), each a list of node indices.
class Components {
 public:
  explicit Components(const std::vector<std::vector<Edge>>& edges)
      : edges_(edges), index_(edges.size(), -1), low_(edges.size()), on_stack_(edges.size()) {
    for (int v = 0; v < static_cast<int>(edges.size()); ++v)
      if (index_[v] < 0) visit(v);
  }
  const std::vector<std::vector<int>>& list() const { return components_; }

 private:
  void visit(int v) {
    index_[v] = low_[v] = next_++;
    stack_.push_back(v);
    on_stack_[v] = true;
    for (const Edge& e : edges_[v]) {
      if (index_[e.to] < 0) {
        visit(e.to);
        low_[v] = std::min(low_[v], low_[e.to]);
      } else if (on_stack_[e.to]) {
        low_[v] = std::min(low_[v], index_[e.to]);
      }
    }
    if (low_[v] != index_[v]) return;
    std::vector<int> component;
    int w;
    do {
      w = stack_.back();
      stack_.pop_back();
      on_stack_[w] = false;
      component.push_back(w);
    } while (w != v);
    std::sort(component.begin(), component.end());
    components_.push_back(component);
  }

  const std::vector<std::vector<Edge>>& edges_;
  std::vector<int> index_, low_;
  std::vector<bool> on_stack_;
  std::vector<int> stack_;
  int next_ = 0;
  std::vector<std::vector<int>> components_;
};

// Shortest way from `start` back to itself inside `component`, as the edges taken.
std::vector<std::pair<int, Edge>> shortest_cycle(const std::vector<std::vector<Edge>>& edges,
                                                 const std::vector<int>& component, int start) {
  std::map<int, std::pair<int, Edge>> came_from;  // node -> (previous node, edge)
  std::vector<int> frontier{start};
  while (!frontier.empty()) {
    std::vector<int> next;
    for (int v : frontier) {
      for (const Edge& e : edges[v]) {
        if (!std::binary_search(component.begin(), component.end(), e.to)) continue;
        if (e.to == start) {
          std::vector<std::pair<int, Edge>> cycle{{v, e}};
          for (int at = v; at != start; at = came_from.at(at).first) cycle.push_back(came_from.at(at));
          std::reverse(cycle.begin(), cycle.end());
          return cycle;
        }
        if (came_from.count(e.to)) continue;
        came_from.emplace(e.to, std::pair{v, e});
        next.push_back(e.to);
      }
    }
    frontier = std::move(next);
  }
  return {};
}

void check_cycles(IssueList& out, const Columns& columns) {
  const std::vector<NodeSpec>& nodes = out.nodes();
  const auto edges = build_edges(nodes, columns);
  const Components components(edges);
  for (const auto& component : components.list()) {
    const int start = component.front();  // first in file order
    auto cycle = shortest_cycle(edges, component, start);
    if (cycle.empty()) continue;  // a single node that does not read itself
    std::string path = "'" + nodes[start].id + "'", through;
    for (const auto& [from, edge] : cycle) {
      path += " -> '" + nodes[edge.to].id + "'";
      through += (through.empty() ? "" : ", ") + std::string("'") + edge.column + "'";
    }
    std::string message = cycle.size() == 1 ? "reads column " + through + " that it writes itself"
                                            : "is in a cycle " + path + " (through columns " + through + ")";
    out.add(out.node_line(start), nodes[start].id, message,
            "a node runs once all its inputs exist, so these nodes wait on each other forever; "
            "remove one of these inputs, or give the value a step earlier a different column name");
  }
}

}  // namespace

void check_dataflow(IssueList& out, const MethodCatalog& catalog) {
  const Columns columns = collect_writers(out, catalog);
  check_inputs(out, columns);
  check_cycles(out, columns);
}

}  // namespace rlwb::core::graph_detail
