#include "ui/graph/auto_layout.h"

#include <gvc.h>

#include <cmath>
#include <memory>
#include <string>

#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"

namespace rlwb::ui {
namespace {

// Graphviz takes sizes in inches and gives coordinates in points (1/72 in);
// one world unit is one point.
std::string inches(float world) { return std::to_string(world / 72.0f); }

void set(void* object, const char* name, const std::string& value) {
  agsafeset(object, const_cast<char*>(name), const_cast<char*>(value.c_str()), const_cast<char*>(""));
}

struct GraphvizGraph {
  GVC_t* gvc = gvContext();
  Agraph_t* graph = agopen(const_cast<char*>("rlwb"), Agdirected, nullptr);
  bool laid_out = false;
  ~GraphvizGraph() {
    if (laid_out) gvFreeLayout(gvc, graph);
    agclose(graph);
    gvFreeContext(gvc);
  }
};

}  // namespace

std::map<std::string, Vec2> auto_layout(const core::Experiment& exp, float x0, float y0) {
  std::map<std::string, Vec2> out = auto_layout_graph(exp, "", x0, y0);
  for (const auto& phase : graphs_with_nodes(exp)) {
    if (phase.empty()) continue;
    // The frame's title band and padding sit above the phase's first row.
    const float top = next_block_top(exp, out, y0) + kGroupTitle + kGroupPad;
    out.merge(auto_layout_graph(exp, phase, x0, top));
  }
  return out;
}

float next_block_top(const core::Experiment& exp, const std::map<std::string, Vec2>& pos, float y0) {
  float bottom = y0 - kGroupGap;  // nothing placed yet: the block starts at y0
  for (const auto& graph : graphs_with_nodes(exp)) {
    bool placed = false;
    for (const auto& node : graph_nodes(exp, graph)) placed = placed || pos.count(canvas_key(graph, node.id));
    if (!placed) continue;
    if (auto bounds = graph_bounds(exp, pos, graph))
      bottom = std::max(bottom, bounds->max.y + (graph.empty() ? 0 : kGroupPad));
  }
  return bottom + kGroupGap;
}

std::map<std::string, Vec2> auto_layout_graph(const core::Experiment& whole, const std::string& phase,
                                              float x0, float y0) {
  std::map<std::string, Vec2> out;
  const core::Experiment view = phase.empty() ? core::Experiment{} : graph_view(whole, phase);
  const core::Experiment& graph = phase.empty() ? whole : view;
  if (graph.nodes.empty()) return out;
  agseterr(AGERR);  // no warnings on stderr
  GraphvizGraph g;
  set(g.graph, "rankdir", "LR");
  set(g.graph, "ranksep", inches(kLayoutRankGap));
  set(g.graph, "nodesep", inches(kLayoutNodeGap));
  std::map<std::string, Agnode_t*> nodes;
  std::map<std::string, Vec2> sizes;
  for (const auto& node : graph.nodes) {
    if (nodes.count(node.id)) continue;  // a duplicate id (the validator reports it)
    Agnode_t* n = agnode(g.graph, const_cast<char*>(node.id.c_str()), 1);
    const Vec2 size = node_size(graph, node);
    set(n, "shape", "box");
    set(n, "fixedsize", "true");
    set(n, "label", "");
    set(n, "width", inches(size.x));
    set(n, "height", inches(size.y));
    nodes[node.id] = n;
    sizes[node.id] = size;
  }
  for (const Link& link : graph_links(graph)) {
    auto from = nodes.find(link.from), to = nodes.find(link.to);
    if (from == nodes.end() || to == nodes.end() || link.from == link.to) continue;  // the task box
    Agedge_t* e = agedge(g.graph, from->second, to->second, nullptr, 1);
    set(e, "tailport", "e");  // outputs leave on the right, inputs arrive on the left
    set(e, "headport", "w");
  }
  if (gvLayout(g.gvc, g.graph, "dot") != 0) return out;
  g.laid_out = true;
  // Graphviz's y grows upwards and gives centres; the canvas's grows down and uses corners.
  const boxf bb = GD_bb(g.graph);
  for (const auto& [id, n] : nodes) {
    const Vec2 size = sizes[id];
    const float cx = static_cast<float>(ND_coord(n).x - bb.LL.x);
    const float cy = static_cast<float>(bb.UR.y - ND_coord(n).y);
    out[canvas_key(phase, id)] = {std::round(x0 + cx - size.x / 2), std::round(y0 + cy - size.y / 2)};
  }
  return out;
}

}  // namespace rlwb::ui
