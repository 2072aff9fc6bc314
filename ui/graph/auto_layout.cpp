#include "ui/graph/auto_layout.h"

#include <gvc.h>

#include <cmath>
#include <memory>
#include <string>

#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"

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
  std::map<std::string, Vec2> out;
  if (exp.nodes.empty()) return out;
  agseterr(AGERR);  // no warnings on stderr
  GraphvizGraph g;
  set(g.graph, "rankdir", "LR");
  set(g.graph, "ranksep", inches(kLayoutRankGap));
  set(g.graph, "nodesep", inches(kLayoutNodeGap));
  std::map<std::string, Agnode_t*> nodes;
  std::map<std::string, Vec2> sizes;
  for (const auto& node : exp.nodes) {
    if (nodes.count(node.id)) continue;  // a duplicate id (the validator reports it)
    Agnode_t* n = agnode(g.graph, const_cast<char*>(node.id.c_str()), 1);
    const Vec2 size = node_size(exp, node);
    set(n, "shape", "box");
    set(n, "fixedsize", "true");
    set(n, "label", "");
    set(n, "width", inches(size.x));
    set(n, "height", inches(size.y));
    nodes[node.id] = n;
    sizes[node.id] = size;
  }
  for (const Link& link : graph_links(exp)) {
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
    out[id] = {std::round(x0 + cx - size.x / 2), std::round(y0 + cy - size.y / 2)};
  }
  return out;
}

}  // namespace rlwb::ui
