#include "ui/graph/pin_order.h"

#include <algorithm>
#include <limits>
#include <numeric>

#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"

namespace rlwb::ui {
namespace {

constexpr float kLast = std::numeric_limits<float>::infinity();  // pins with nothing to follow

std::vector<size_t> identity(size_t n) {
  std::vector<size_t> rows(n);
  std::iota(rows.begin(), rows.end(), 0);
  return rows;
}

// rows[i]: the rank of key[i] (stable: ties keep their order).
std::vector<size_t> rows_by(const std::vector<float>& key) {
  std::vector<size_t> order = identity(key.size()), rows(key.size());
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key[a] < key[b]; });
  for (size_t r = 0; r < order.size(); ++r) rows[order[r]] = r;
  return rows;
}

Vec2 at_key(const std::map<std::string, Vec2>& pos, const std::string& key) {
  auto it = pos.find(key);
  return it == pos.end() ? Vec2{} : it->second;
}

// The mean height of the centres of the nodes (other than `writer`) that read `column`.
float mean_reader_y(const core::Experiment& graph, const std::map<std::string, Vec2>& pos,
                    const std::string& phase, const std::string& column, const std::string& writer) {
  float sum = 0;
  int count = 0;
  for (const auto& reader : graph.nodes) {
    if (reader.id == writer || std::find(reader.in.begin(), reader.in.end(), column) == reader.in.end())
      continue;
    sum += at_key(pos, canvas_key(phase, reader.id)).y + node_size(graph, reader).y / 2;
    ++count;
  }
  return count ? sum / static_cast<float>(count) : kLast;
}

// Straight segments a-b and c-d cross (touching at a shared pin does not count).
bool cross(Vec2 a, Vec2 b, Vec2 c, Vec2 d) {
  auto side = [](Vec2 p, Vec2 q, Vec2 r) { return (q.x - p.x) * (r.y - p.y) - (q.y - p.y) * (r.x - p.x); };
  const float d1 = side(c, d, a), d2 = side(c, d, b), d3 = side(a, b, c), d4 = side(a, b, d);
  return ((d1 > 0 && d2 < 0) || (d1 < 0 && d2 > 0)) && ((d3 > 0 && d4 < 0) || (d3 < 0 && d4 > 0));
}

}  // namespace

const PinRows& GraphPinRows::of(const std::string& id) const {
  static const PinRows none;
  auto it = nodes.find(id);
  return it == nodes.end() ? none : it->second;
}

Vec2 input_pin(const core::Experiment& graph, const core::NodeSpec& node, Vec2 at, size_t row) {
  return {at.x, at.y + pins_top(graph, node) + kPinRow * (static_cast<float>(row) + 0.5f)};
}

Vec2 output_pin(const core::Experiment& graph, const core::NodeSpec& node, Vec2 at, size_t row) {
  return {at.x + node_size(graph, node).x,
          at.y + pins_top(graph, node) + kPinRow * (static_cast<float>(row) + 0.5f)};
}

Vec2 task_pin(Vec2 corner, size_t row) {
  return {corner.x + kTaskWidth, corner.y + 30 + kPinRow * (static_cast<float>(row) + 0.5f)};
}

GraphPinRows file_order_pins(const core::Experiment& exp, const std::string& phase) {
  const core::Experiment graph = graph_view(exp, phase);
  GraphPinRows rows;
  for (const auto& node : graph.nodes)
    rows.nodes[node.id] = {identity(node.in.size()), identity(node.out.size())};
  rows.task = identity(task_columns(graph).size());
  return rows;
}

GraphPinRows order_pins(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                        const std::string& phase) {
  const core::Experiment graph = graph_view(exp, phase);
  GraphPinRows rows;
  // Outputs (and the task's) first: the inputs follow the pins they come from.
  for (const auto& node : graph.nodes) {
    std::vector<float> key;
    for (const auto& column : node.out) key.push_back(mean_reader_y(graph, pos, phase, column, node.id));
    rows.nodes[node.id].out = rows_by(key);
  }
  const std::vector<std::string> task_cols = task_columns(graph);
  std::vector<float> task_key;
  for (const auto& column : task_cols) task_key.push_back(mean_reader_y(graph, pos, phase, column, ""));
  rows.task = rows_by(task_key);
  const auto box = task_box(exp, pos, phase);
  // Where each column leaves from: its first writer's output pin, or the task box.
  std::map<std::string, float> source_y;
  for (size_t i = 0; i < task_cols.size(); ++i)
    if (box) source_y[task_cols[i]] = task_pin(box->min, rows.task[i]).y;
  for (const auto& node : graph.nodes)
    for (size_t i = 0; i < node.out.size(); ++i)
      source_y.emplace(
          node.out[i],
          output_pin(graph, node, at_key(pos, canvas_key(phase, node.id)), rows.nodes[node.id].out[i]).y);
  for (const auto& node : graph.nodes) {
    std::vector<float> key;
    for (const auto& column : node.in) {
      auto it = source_y.find(column);
      key.push_back(it == source_y.end() ? kLast : it->second);
    }
    rows.nodes[node.id].in = rows_by(key);
  }
  return rows;
}

size_t link_crossings(const core::Experiment& exp, const std::map<std::string, Vec2>& pos,
                      const std::string& phase, const GraphPinRows& rows) {
  const core::Experiment graph = graph_view(exp, phase);
  const auto box = task_box(exp, pos, phase);
  const std::vector<std::string> task_cols = task_columns(graph);
  auto node_of = [&](const std::string& id) -> const core::NodeSpec* {
    for (const auto& n : graph.nodes)
      if (n.id == id) return &n;
    return nullptr;
  };
  std::vector<std::pair<Vec2, Vec2>> segments;
  for (const Link& link : graph_links(graph)) {
    const core::NodeSpec* to = node_of(link.to);
    if (!to) continue;
    Vec2 from{};
    if (link.from == kTaskNode) {
      const auto it = std::find(task_cols.begin(), task_cols.end(), link.column);
      if (!box || it == task_cols.end()) continue;
      from = task_pin(box->min, rows.task[static_cast<size_t>(it - task_cols.begin())]);
    } else {
      const core::NodeSpec* writer = node_of(link.from);
      if (!writer) continue;
      const auto it = std::find(writer->out.begin(), writer->out.end(), link.column);
      if (it == writer->out.end()) continue;
      from = output_pin(graph, *writer, at_key(pos, canvas_key(phase, writer->id)),
                        rows.of(writer->id).out[static_cast<size_t>(it - writer->out.begin())]);
    }
    const Vec2 into = input_pin(graph, *to, at_key(pos, canvas_key(phase, to->id)),
                                rows.of(to->id).in[static_cast<size_t>(link.to_input)]);
    segments.push_back({from, into});
  }
  size_t crossings = 0;
  for (size_t i = 0; i < segments.size(); ++i)
    for (size_t j = i + 1; j < segments.size(); ++j)
      crossings += cross(segments[i].first, segments[i].second, segments[j].first, segments[j].second);
  return crossings;
}

}  // namespace rlwb::ui
