// [SECTION] The node canvas: geometry, hit tests, gestures, drawing.
#include <algorithm>
#include <cmath>

#include "imgui.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/minimap.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/pin_order.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {

void draw_canvas(GraphEditor& ed, ImVec2 size);

// One hue per pool, so nodes sharing workers look alike.
ImU32 pool_color(size_t index) {
  static const ImU32 colors[] = {IM_COL32(40, 90, 150, 255), IM_COL32(40, 120, 90, 255),
                                 IM_COL32(120, 70, 140, 255), IM_COL32(150, 90, 40, 255),
                                 IM_COL32(40, 120, 130, 255)};
  return colors[index % (sizeof colors / sizeof colors[0])];
}

namespace {

// World units (layout coordinates).
constexpr float kHeader = kNodeHeader, kRow = kPinRow, kInfoLine = kNodeInfoLine;  // node_geometry.h
constexpr float kPinRadius = 5, kPinHit = 9;

ImVec2 add(ImVec2 a, ImVec2 b) { return {a.x + b.x, a.y + b.y}; }
float dist2(ImVec2 a, ImVec2 b) { return (a.x - b.x) * (a.x - b.x) + (a.y - b.y) * (a.y - b.y); }

ImU32 header_color(const core::Experiment& exp, const core::NodeSpec& node) {
  if (node.target == "builtin") return IM_COL32(88, 88, 104, 255);
  if (exp.rewards.count(node.target)) return IM_COL32(120, 110, 40, 255);
  auto m = exp.models.find(node.target);
  if (m == exp.models.end()) return IM_COL32(120, 50, 50, 255);
  size_t index = 0;
  for (const auto& [name, pool] : exp.pools) {
    if (name == m->second.pool) break;
    ++index;
  }
  return pool_color(index);
}

void add_node_boxes(const GraphDocument& doc, const CanvasView& view, ImVec2 origin, const std::string& phase,
                    const GraphPinRows& rows, std::vector<NodeBox>& boxes);

// The boxes of every graph as `view` draws them with the canvas at `origin`.
std::vector<NodeBox> layout_boxes(const GraphDocument& doc, const CanvasView& view, ImVec2 origin) {
  const core::Experiment& exp = doc.experiment();
  const float z = view.zoom;
  std::vector<NodeBox> boxes;
  for (const std::string& phase : graphs_with_nodes(exp)) {
    const GraphPinRows rows = order_pins(exp, doc.positions(), phase);
    // The task box sits left of the graph's leftmost node, level with its topmost.
    if (const auto rect = task_box(exp, doc.positions(), phase)) {
      const std::vector<std::string> task_cols = task_columns(phase.empty() ? exp : graph_view(exp, phase));
      NodeBox task;
      task.id = canvas_key(phase, kTaskNode);
      task.phase = phase;
      task.task = true;
      const ImVec2 w(rect->min.x, rect->min.y);
      task.min = view.to_screen(w, origin);
      task.max = view.to_screen(ImVec2(rect->max.x, rect->max.y), origin);
      task.header = 28 * z;
      for (size_t i = 0; i < task_cols.size(); ++i) {
        const Vec2 pin = task_pin(rect->min, rows.task[i]);
        task.outs.push_back({task_cols[i], view.to_screen(ImVec2(pin.x, pin.y), origin)});
      }
      task.out_rows = rows.task;
      boxes.push_back(task);
    }
    add_node_boxes(doc, view, origin, phase, rows, boxes);
  }
  return boxes;
}

// A graph's node boxes, appended to `boxes`.
void add_node_boxes(const GraphDocument& doc, const CanvasView& view, ImVec2 origin, const std::string& phase,
                    const GraphPinRows& rows, std::vector<NodeBox>& boxes) {
  const core::Experiment& exp = doc.experiment();
  const float z = view.zoom;
  for (const auto& node : graph_nodes(exp, phase)) {
    NodeBox box;
    box.id = canvas_key(phase, node.id);
    box.phase = phase;
    Vec2 p = doc.position(box.id);
    const float pins_top = ui::pins_top(exp, node);
    const Vec2 size = node_size(exp, node);
    box.min = view.to_screen(ImVec2(p.x, p.y), origin);
    box.max = view.to_screen(ImVec2(p.x + size.x, p.y + size.y), origin);
    box.header = kHeader * z;
    box.in_rows = rows.of(node.id).in;
    box.out_rows = rows.of(node.id).out;
    for (size_t i = 0; i < node.in.size(); ++i) {
      const Vec2 pin = input_pin(exp, node, p, box.in_rows[i]);
      box.ins.push_back({node.in[i], view.to_screen(ImVec2(pin.x, pin.y), origin)});
      box.in_labels.push_back(pin_label(node.in_port(i), node.in[i]));
    }
    box.add_in = view.to_screen(ImVec2(p.x, p.y + pins_top + kRow * (node.in.size() + 0.5f)), origin);
    for (size_t i = 0; i < node.out.size(); ++i) {
      const Vec2 pin = output_pin(exp, node, p, box.out_rows[i]);
      box.outs.push_back({node.out[i], view.to_screen(ImVec2(pin.x, pin.y), origin)});
      box.out_labels.push_back(pin_label(node.out_port(i), node.out[i]));
    }
    boxes.push_back(box);
  }
}

// The boxes as the editor's view draws them.
std::vector<NodeBox> layout_boxes(const GraphEditor& ed, ImVec2 origin) {
  return layout_boxes(*ed.doc, ed.view, origin);
}

// The boxes in world units (the layout's coordinates).
std::vector<NodeBox> world_boxes(const GraphEditor& ed) {
  return layout_boxes(*ed.doc, CanvasView{}, ImVec2(0, 0));
}

struct PinHit {
  std::string node, column;
  bool out = false;
  int slot = -1;  // input index; in.size() for the "+ in" slot
};

std::optional<PinHit> pin_at(const std::vector<NodeBox>& boxes, ImVec2 mouse, float zoom) {
  const float r2 = std::max(kPinHit, kPinHit * zoom) * std::max(kPinHit, kPinHit * zoom);
  for (auto it = boxes.rbegin(); it != boxes.rend(); ++it) {
    for (const auto& [col, at] : it->outs)
      if (dist2(at, mouse) <= r2) return PinHit{it->id, col, true, -1};
    for (size_t i = 0; i < it->ins.size(); ++i)
      if (dist2(it->ins[i].second, mouse) <= r2)
        return PinHit{it->id, it->ins[i].first, false, static_cast<int>(i)};
    if (!it->task && dist2(it->add_in, mouse) <= r2)
      return PinHit{it->id, "", false, static_cast<int>(it->ins.size())};
  }
  return std::nullopt;
}

const NodeBox* box_at(const std::vector<NodeBox>& boxes, ImVec2 mouse) {
  for (auto it = boxes.rbegin(); it != boxes.rend(); ++it)
    if (mouse.x >= it->min.x && mouse.x <= it->max.x && mouse.y >= it->min.y && mouse.y <= it->max.y)
      return &*it;
  return nullptr;
}

const NodeBox* find_box(const std::vector<NodeBox>& boxes, const std::string& id) {
  for (const auto& b : boxes)
    if (b.id == id) return &b;
  return nullptr;
}

ImVec2 pin_of(const NodeBox& box, const std::string& column, bool out, int slot) {
  if (out) {
    for (const auto& [c, at] : box.outs)
      if (c == column) return at;
    return box.max;
  }
  if (slot >= 0 && slot < static_cast<int>(box.ins.size())) return box.ins[slot].second;
  return box.add_in;
}

void bezier_points(ImVec2 a, ImVec2 b, float zoom, ImVec2 out[4]) {
  float dx = std::max(40.0f * zoom, std::abs(b.x - a.x) * 0.5f);
  out[0] = a;
  out[1] = ImVec2(a.x + dx, a.y);
  out[2] = ImVec2(b.x - dx, b.y);
  out[3] = b;
}

// The curve of a link between two drawn boxes; false when either is not drawn.
bool link_curve(const std::vector<NodeBox>& boxes, const Link& link, float zoom, ImVec2 out[4]) {
  const NodeBox* a = find_box(boxes, link.from);
  const NodeBox* b = find_box(boxes, link.to);
  if (!a || !b) return false;
  bezier_points(pin_of(*a, link.column, true, -1), pin_of(*b, link.column, false, link.to_input), zoom, out);
  return true;
}

float distance_to_bezier(const ImVec2 p[4], ImVec2 m) {
  float best = 1e30f;
  ImVec2 prev = p[0];
  for (int i = 1; i <= 24; ++i) {
    float t = i / 24.0f, u = 1 - t;
    ImVec2 q(u * u * u * p[0].x + 3 * u * u * t * p[1].x + 3 * u * t * t * p[2].x + t * t * t * p[3].x,
             u * u * u * p[0].y + 3 * u * u * t * p[1].y + 3 * u * t * t * p[2].y + t * t * t * p[3].y);
    // distance from m to segment prev-q
    ImVec2 d(q.x - prev.x, q.y - prev.y);
    float len2 = d.x * d.x + d.y * d.y;
    float s = len2 > 0 ? std::clamp(((m.x - prev.x) * d.x + (m.y - prev.y) * d.y) / len2, 0.0f, 1.0f) : 0;
    ImVec2 c(prev.x + d.x * s, prev.y + d.y * s);
    best = std::min(best, dist2(c, m));
    prev = q;
  }
  return std::sqrt(best);
}

void text_at(ImDrawList* dl, ImVec2 at, ImU32 color, const std::string& text, float zoom, float scale = 1) {
  if (zoom < 0.35f) return;
  dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * zoom * scale, at, color, text.c_str());
}

void frame_all(GraphEditor& ed, ImVec2 size) {
  const std::vector<NodeBox> boxes = world_boxes(ed);
  if (boxes.empty()) {
    ed.view = CanvasView{};
    return;
  }
  ImVec2 lo = boxes[0].min, hi = boxes[0].max;
  for (const auto& b : boxes) {
    lo = ImVec2(std::min(lo.x, b.min.x), std::min(lo.y, b.min.y));
    hi = ImVec2(std::max(hi.x, b.max.x), std::max(hi.y, b.max.y));
  }
  for (const PhaseGroup& g : phase_groups(ed.doc->experiment(), ed.doc->positions())) {
    lo = ImVec2(std::min(lo.x, g.frame.min.x), std::min(lo.y, g.frame.min.y));
    hi = ImVec2(std::max(hi.x, g.frame.max.x), std::max(hi.y, g.frame.max.y));
  }
  ed.view.frame(lo, hi, size);
}

// A trainer phase's group as drawn: its frame on screen.
struct GroupOnScreen {
  const PhaseGroup* group;
  ImVec2 min, max;
  float title = 0;  // height of the title band (screen)
  bool in_title(ImVec2 m) const {
    return m.x >= min.x && m.x <= max.x && m.y >= min.y && m.y <= min.y + title;
  }
  bool contains(ImVec2 m) const { return m.x >= min.x && m.x <= max.x && m.y >= min.y && m.y <= max.y; }
};

std::vector<GroupOnScreen> groups_on_screen(const std::vector<PhaseGroup>& groups, const CanvasView& view,
                                            ImVec2 origin) {
  std::vector<GroupOnScreen> out;
  for (const PhaseGroup& g : groups) {
    GroupOnScreen s{&g, view.to_screen(ImVec2(g.frame.min.x, g.frame.min.y), origin),
                    view.to_screen(ImVec2(g.frame.max.x, g.frame.max.y), origin), 0};
    // A settings box is all title: a click anywhere on it selects the phase.
    s.title = g.has_nodes ? kGroupTitle * view.zoom : s.max.y - s.min.y;
    out.push_back(s);
  }
  return out;
}

// The group a frame-or-box click lands in: its title band (`title`), or
// anywhere inside a frame of nodes.
const GroupOnScreen* group_at(const std::vector<GroupOnScreen>& groups, ImVec2 mouse, bool title) {
  for (const auto& g : groups)
    if (title ? g.in_title(mouse) : g.group->has_nodes && g.contains(mouse)) return &g;
  return nullptr;
}

// Draws the groups behind the nodes: a frame with the phase's title and
// settings for a phase with nodes, a small box listing them otherwise.
void draw_groups(ImDrawList* dl, const std::vector<GroupOnScreen>& groups, const GraphEditor& ed) {
  const float z = ed.view.zoom, pad = 10 * z;
  for (const auto& g : groups) {
    const bool selected = ed.selected.empty() && ed.inspected_phase == g.group->phase;
    const ImU32 border = selected ? IM_COL32(255, 210, 90, 255) : IM_COL32(110, 120, 150, 200);
    dl->AddRectFilled(g.min, g.max, IM_COL32(52, 58, 74, g.group->has_nodes ? 90 : 230), 8 * z);
    dl->AddRectFilled(g.min, ImVec2(g.max.x, g.min.y + (g.group->has_nodes ? g.title : 26 * z)),
                      IM_COL32(64, 72, 96, 230), 8 * z, ImDrawFlags_RoundCornersTop);
    dl->AddRect(g.min, g.max, border, 8 * z, 0, selected ? 2.5f : 1.5f);
    dl->PushClipRect(g.min, g.max, true);  // a long summary is cut at the frame, not drawn over others
    text_at(dl, ImVec2(g.min.x + pad, g.min.y + 5 * z), IM_COL32(235, 238, 250, 255), g.group->title, z,
            1.05f);
    if (g.group->has_nodes) {
      std::string settings;
      for (const auto& line : g.group->summary) settings += (settings.empty() ? "" : "   ") + line;
      const float after = ImGui::CalcTextSize(g.group->title.c_str()).x * z * 1.05f + 3 * pad;
      text_at(dl, ImVec2(g.min.x + after, g.min.y + 8 * z), IM_COL32(170, 180, 200, 255), settings, z, 0.85f);
    } else {
      float y = g.min.y + 26 * z + 2 * z;
      for (const auto& line : g.group->summary) {
        text_at(dl, ImVec2(g.min.x + pad, y), IM_COL32(170, 180, 200, 255), line, z, 0.85f);
        y += kNodeInfoLine * z;
      }
    }
    dl->PopClipRect();
    items().record("group/" + g.group->phase, g.min, ImVec2(g.max.x, g.min.y + g.title));
  }
}

}  // namespace

void draw_canvas(GraphEditor& ed, ImVec2 size) {
  GraphDocument& doc = *ed.doc;
  ImGuiIO& io = ImGui::GetIO();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  const ImVec2 end = add(origin, size);
  ImGui::InvisibleButton("canvas", size,
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight |
                             ImGuiButtonFlags_MouseButtonMiddle);
  items().record("canvas", origin, end);
  if (ed.frame_requested) {
    frame_all(ed, size);
    ed.frame_requested = false;
  }
  const std::vector<NodeBox> world = world_boxes(ed);
  if (!ed.centre_on.empty()) {  // the search's match
    for (const auto& b : world)
      if (b.id == ed.centre_on)
        ed.view.centre_on(ImVec2((b.min.x + b.max.x) / 2, (b.min.y + b.max.y) / 2), size);
    ed.centre_on.clear();
  }
  // The minimap takes the pointer where it is; the canvas everywhere else.
  const MinimapGeometry map = minimap_geometry(world, origin, size);
  const bool on_map = ImGui::IsItemHovered() && map.contains(io.MousePos);
  const bool hovered = ImGui::IsItemHovered() && !on_map && ed.drag != GraphEditor::Drag::minimap;
  if (on_map && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && ed.drag == GraphEditor::Drag::none)
    ed.drag = GraphEditor::Drag::minimap;
  if (ed.drag == GraphEditor::Drag::minimap) {
    ed.view.centre_on(map.to_world(io.MousePos), size);
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) ed.drag = GraphEditor::Drag::none;
  }
  const std::vector<std::string> hit_list = search_nodes(doc.experiment(), ed.search);
  const std::set<std::string> hits(hit_list.begin(), hit_list.end());

  ImDrawList* dl = ImGui::GetWindowDrawList();
  dl->PushClipRect(origin, end, true);
  dl->AddRectFilled(origin, end, IM_COL32(30, 32, 38, 255));
  const float grid = 32 * ed.view.zoom;
  if (grid > 6) {
    float ox = std::fmod(ed.view.offset.x * ed.view.zoom, grid),
          oy = std::fmod(ed.view.offset.y * ed.view.zoom, grid);
    for (float x = origin.x + ox; x < end.x; x += grid)
      dl->AddLine(ImVec2(x, origin.y), ImVec2(x, end.y), IM_COL32(40, 43, 50, 255));
    for (float y = origin.y + oy; y < end.y; y += grid)
      dl->AddLine(ImVec2(origin.x, y), ImVec2(end.x, y), IM_COL32(40, 43, 50, 255));
  }

  std::vector<NodeBox> boxes = layout_boxes(ed, origin);
  const ImVec2 mouse = io.MousePos;
  const core::Experiment& exp = doc.experiment();
  std::vector<Link> links = canvas_links(exp);
  const std::vector<PhaseGroup> groups = phase_groups(exp, doc.positions());
  const std::vector<GroupOnScreen> shown_groups = groups_on_screen(groups, ed.view, origin);

  // What the pointer is on.
  std::optional<PinHit> pin = hovered ? pin_at(boxes, mouse, ed.view.zoom) : std::nullopt;
  const NodeBox* over_box = hovered ? box_at(boxes, mouse) : nullptr;
  const GroupOnScreen* over_title =
      hovered && !pin && !over_box ? group_at(shown_groups, mouse, true) : nullptr;
  int over_link = -1;
  if (hovered && !pin && !over_box && !over_title) {
    float best = 6;
    for (size_t i = 0; i < links.size(); ++i) {
      ImVec2 p[4];
      if (!link_curve(boxes, links[i], ed.view.zoom, p)) continue;
      float d = distance_to_bezier(p, mouse);
      if (d < best) best = d, over_link = static_cast<int>(i);
    }
  }

  // Gestures.
  if (hovered && io.MouseWheel != 0) ed.view.zoom_at(mouse, origin, std::pow(1.12f, io.MouseWheel));
  if (hovered &&
      (ImGui::IsMouseClicked(ImGuiMouseButton_Middle) || ImGui::IsMouseClicked(ImGuiMouseButton_Right))) {
    ed.drag = GraphEditor::Drag::pan;
    ed.drag_origin = mouse;
  }
  if (ed.drag == GraphEditor::Drag::pan) {
    ed.view.pan(io.MouseDelta);
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Middle) && !ImGui::IsMouseDown(ImGuiMouseButton_Right)) {
      if (ImGui::IsMouseReleased(ImGuiMouseButton_Right) && dist2(mouse, ed.drag_origin) < 16)
        ed.open_context = true;
      ed.drag = GraphEditor::Drag::none;
    }
  }
  const bool editable = doc.loaded();
  if (hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && ed.drag == GraphEditor::Drag::none) {
    ed.drag_origin = mouse;
    if (pin && pin->out && editable) {
      ed.drag = GraphEditor::Drag::link;
      ed.link_from = pin->node;
      ed.link_column = pin->column;
    } else if (over_box && !over_box->task) {
      ed.inspected_phase = over_box->phase;
      if (io.KeyCtrl) {
        if (!ed.selected.erase(over_box->id)) ed.selected.insert(over_box->id);
      } else if (!ed.selected.count(over_box->id)) {
        ed.selected = {over_box->id};
      }
      ed.selected_link.reset();
      if (editable && ed.selected.count(over_box->id)) {
        ed.drag = GraphEditor::Drag::move;
        ed.move_from.clear();
        for (const auto& id : ed.selected) ed.move_from[id] = doc.position(id);
        doc.begin_gesture();
      }
    } else if (over_title) {
      ed.inspected_phase = over_title->group->phase;
      ed.selected.clear();
      ed.selected_link.reset();
      ed.status = "selected the " + over_title->group->title + " phase";
    } else if (over_link >= 0) {
      ed.selected_link = links[over_link];
      if (!io.KeyCtrl) ed.selected.clear();
    } else {
      const GroupOnScreen* frame = group_at(shown_groups, mouse, false);
      ed.inspected_phase = frame ? frame->group->phase : "";
      ed.drag = GraphEditor::Drag::box;
      if (!io.KeyCtrl) ed.selected.clear();
      ed.selected_link.reset();
    }
  }

  // Link drag target: an input pin, a node's "+ in" slot, or a node body (new input).
  std::optional<PinHit> link_target;
  LinkCheck link_check;
  if (ed.drag == GraphEditor::Drag::link) {
    if (pin && !pin->out)
      link_target = pin;
    else if (over_box && !over_box->task)
      link_target = PinHit{over_box->id, "", false, static_cast<int>(over_box->ins.size())};
    if (link_target) {
      const NodeRef from = split_canvas_key(ed.link_from), to = split_canvas_key(link_target->node);
      if (from.phase != to.phase)
        link_check = {false, "a link stays inside its graph (" +
                                 (from.phase.empty() ? std::string("the step") : phase_title(from.phase)) +
                                 ")"};
      else
        link_check = check_link(from.phase.empty() ? exp : graph_view(exp, from.phase), from.id,
                                ed.link_column, to.id, link_target->slot);
      ed.status = link_check.ok ? "release to link '" + ed.link_column + "' into " + link_target->node
                                : "cannot link: " + link_check.reason;
    }
  }

  if (ed.drag == GraphEditor::Drag::move) {
    ImVec2 d((mouse.x - ed.drag_origin.x) / ed.view.zoom, (mouse.y - ed.drag_origin.y) / ed.view.zoom);
    for (const auto& [id, from] : ed.move_from) doc.set_position(id, {from.x + d.x, from.y + d.y});
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      // Snap to whole units, like the file stores them.
      for (const auto& [id, from] : ed.move_from) {
        Vec2 p = doc.position(id);
        doc.set_position(id, {std::round(p.x), std::round(p.y)});
      }
      if (doc.end_gesture()) ed.status = "moved " + std::to_string(ed.move_from.size()) + " node(s)";
      ed.drag = GraphEditor::Drag::none;
    }
  } else if (ed.drag == GraphEditor::Drag::box) {
    ImVec2 a(std::min(ed.drag_origin.x, mouse.x), std::min(ed.drag_origin.y, mouse.y));
    ImVec2 b(std::max(ed.drag_origin.x, mouse.x), std::max(ed.drag_origin.y, mouse.y));
    dl->AddRectFilled(a, b, IM_COL32(90, 140, 220, 40));
    dl->AddRect(a, b, IM_COL32(90, 140, 220, 200));
    if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
      for (const auto& box : boxes)
        if (!box.task && box.min.x < b.x && box.max.x > a.x && box.min.y < b.y && box.max.y > a.y)
          ed.selected.insert(box.id);
      ed.drag = GraphEditor::Drag::none;
    }
  } else if (ed.drag == GraphEditor::Drag::link && !ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
    if (link_target && link_check.ok) {
      const NodeRef to = split_canvas_key(link_target->node);
      doc.begin_gesture();
      edit_graph(doc.experiment(), to.phase, [&](core::Experiment& graph) {
        apply_link(graph, ed.link_column, to.id, link_target->slot);
      });
      doc.end_gesture();
      ed.status = "linked '" + ed.link_column + "' from " + ed.link_from + " into " + link_target->node;
    } else if (!link_target && hovered && dist2(mouse, ed.drag_origin) > 100) {
      ed.prewire_column = ed.link_column;
      ed.prewire_phase = split_canvas_key(ed.link_from).phase;
      ImVec2 w = ed.view.to_world(mouse, origin);
      ed.prewire_at = {w.x, w.y};
      ed.open_prewire = true;
    }
    ed.drag = GraphEditor::Drag::none;
  }

  // Problems by node's canvas key: an issue's phase says which graph its node is in.
  std::map<std::string, std::vector<const core::GraphIssue*>> node_issues;
  for (const auto& issue : ed.issues)
    if (!issue.node.empty()) node_issues[canvas_key(issue.phase, issue.node)].push_back(&issue);

  draw_groups(dl, shown_groups, ed);

  // Links.
  for (size_t i = 0; i < links.size(); ++i) {
    ImVec2 p[4];
    if (!link_curve(boxes, links[i], ed.view.zoom, p)) continue;
    bool selected = ed.selected_link && *ed.selected_link == links[i];
    ImU32 col = selected                           ? IM_COL32(255, 210, 90, 255)
                : static_cast<int>(i) == over_link ? IM_COL32(220, 220, 230, 255)
                                                   : IM_COL32(150, 160, 180, 220);
    dl->AddBezierCubic(p[0], p[1], p[2], p[3], col, selected ? 3.0f : 2.0f);
    ImVec2 mid((p[0].x + p[3].x) / 2, (p[0].y + p[3].y) / 2);
    items().record("link/" + links[i].from + "/" + links[i].column + "/" + links[i].to,
                   ImVec2(mid.x - 3, mid.y - 3), ImVec2(mid.x + 3, mid.y + 3));
  }
  if (ed.drag == GraphEditor::Drag::link) {
    if (const NodeBox* a = find_box(boxes, ed.link_from)) {
      ImVec2 p[4];
      ImVec2 target = link_target ? pin_of(*find_box(boxes, link_target->node), link_target->column, false,
                                           link_target->slot)
                                  : mouse;
      bezier_points(pin_of(*a, ed.link_column, true, -1), target, ed.view.zoom, p);
      ImU32 col = !link_target    ? IM_COL32(200, 200, 210, 200)
                  : link_check.ok ? IM_COL32(90, 220, 120, 255)
                                  : IM_COL32(230, 80, 70, 255);
      dl->AddBezierCubic(p[0], p[1], p[2], p[3], col, 2.5f);
    }
  }

  // Nodes.
  const float z = ed.view.zoom;
  for (const NodeBox& box : boxes) {
    const bool selected = ed.selected.count(box.id) > 0;
    auto issues_it = node_issues.find(box.id);
    const bool has_error =
        issues_it != node_issues.end() &&
        std::any_of(issues_it->second.begin(), issues_it->second.end(),
                    [](const core::GraphIssue* i) { return i->severity == core::Severity::error; });
    const bool has_warning = issues_it != node_issues.end() && !has_error;
    const core::NodeSpec* node = box.task ? nullptr : find_graph_node(exp, box.id);
    ImU32 header = box.task ? IM_COL32(60, 70, 60, 255) : header_color(exp, *node);
    dl->AddRectFilled(box.min, box.max, IM_COL32(44, 47, 56, 245), 6 * z);
    dl->AddRectFilled(box.min, ImVec2(box.max.x, box.min.y + box.header), header, 6 * z,
                      ImDrawFlags_RoundCornersTop);
    ImU32 border = selected      ? IM_COL32(255, 210, 90, 255)
                   : has_error   ? IM_COL32(235, 70, 60, 255)
                   : has_warning ? IM_COL32(230, 170, 50, 255)
                                 : IM_COL32(20, 20, 24, 255);
    dl->AddRect(box.min, box.max, border, 6 * z, 0, selected || has_error ? 2.5f : 1.5f);
    if (hits.count(box.id)) {  // matches the toolbar's search
      dl->AddRect(ImVec2(box.min.x - 4, box.min.y - 4), ImVec2(box.max.x + 4, box.max.y + 4),
                  IM_COL32(240, 170, 60, 255), 8 * z, 0, 2.0f);
      items().record("hit/" + box.id, box.min, box.max);
    }
    items().record("node/" + box.id, box.min, ImVec2(box.max.x, box.min.y + box.header));
    const float pad = 8 * z;
    if (box.task) {
      text_at(dl, ImVec2(box.min.x + pad, box.min.y + 6 * z), IM_COL32(230, 240, 230, 255),
              "task: " + exp.task.value("name", std::string("?")), z);
    } else {
      text_at(dl, ImVec2(box.min.x + pad, box.min.y + 4 * z), IM_COL32(245, 245, 250, 255), node->id, z,
              1.05f);
      text_at(dl, ImVec2(box.min.x + pad, box.min.y + 21 * z), IM_COL32(210, 215, 225, 255), node->call, z,
              0.9f);
      // Inherited from a base file (defaults:): said just above the box, so
      // the box keeps its size and the layout its spacing.
      const std::string origin =
          box.phase.empty() ? ed.doc->node_origin(*node) : "";  // bases: the step's nodes
      if (!origin.empty()) {
        const ImVec2 at(box.min.x + 2 * z, box.min.y - 15 * z);
        text_at(dl, at, IM_COL32(150, 175, 210, 255), origin, z, 0.8f);
        items().record("origin/" + box.id, at, ImVec2(box.max.x, box.min.y));
      }
      float y = box.min.y + box.header + 2 * z;
      for (const std::string& line : info_lines(exp, *node)) {
        text_at(dl, ImVec2(box.min.x + pad, y), IM_COL32(160, 168, 180, 255), line, z, 0.85f);
        y += kInfoLine * z;
      }
      if (issues_it != node_issues.end()) {
        ImVec2 c(box.max.x - 12 * z, box.min.y + 12 * z);
        dl->AddCircleFilled(c, 8 * z, has_error ? IM_COL32(220, 60, 50, 255) : IM_COL32(220, 160, 40, 255));
        text_at(dl, ImVec2(c.x - 3 * z, c.y - 7 * z), IM_COL32(255, 255, 255, 255),
                std::to_string(issues_it->second.size()), z, 0.9f);
        items().record("issue/" + box.id, ImVec2(c.x - 8 * z, c.y - 8 * z), ImVec2(c.x + 8 * z, c.y + 8 * z));
      }
    }
    auto pin_color = [&](bool out, const std::string& col, int slot) {
      bool hot =
          pin && pin->node == box.id && pin->out == out && (out ? pin->column == col : pin->slot == slot);
      if (ed.drag == GraphEditor::Drag::link && !out && link_target && link_target->node == box.id &&
          link_target->slot == slot)
        return link_check.ok ? IM_COL32(90, 220, 120, 255) : IM_COL32(230, 80, 70, 255);
      return hot   ? IM_COL32(255, 255, 255, 255)
             : out ? IM_COL32(120, 200, 255, 255)
                   : IM_COL32(160, 230, 160, 255);
    };
    for (size_t i = 0; i < box.ins.size(); ++i) {
      const auto& [col, at] = box.ins[i];
      const std::string& shown = i < box.in_labels.size() ? box.in_labels[i] : col;
      dl->AddCircleFilled(at, kPinRadius * z, pin_color(false, col, static_cast<int>(i)));
      text_at(dl, ImVec2(at.x + 9 * z, at.y - 8 * z), IM_COL32(200, 205, 215, 255), shown, z, 0.9f);
      items().record("pin/" + box.id + "/in/" + col, ImVec2(at.x - 5, at.y - 5), ImVec2(at.x + 5, at.y + 5));
    }
    if (!box.task) {
      ImVec2 at = box.add_in;
      bool show = ed.drag == GraphEditor::Drag::link || (over_box && over_box->id == box.id);
      ImU32 c = pin_color(false, "", static_cast<int>(box.ins.size()));
      if (show) {
        dl->AddCircle(at, kPinRadius * z, c, 0, 1.5f);
        text_at(dl, ImVec2(at.x + 9 * z, at.y - 8 * z), IM_COL32(140, 150, 160, 255), "+ in", z, 0.85f);
      }
      items().record("pin/" + box.id + "/in/+", ImVec2(at.x - 5, at.y - 5), ImVec2(at.x + 5, at.y + 5));
    }
    for (size_t i = 0; i < box.outs.size(); ++i) {
      const auto& [col, at] = box.outs[i];
      const std::string& shown = i < box.out_labels.size() ? box.out_labels[i] : col;
      dl->AddCircleFilled(at, kPinRadius * z, pin_color(true, col, -1));
      float w = ImGui::CalcTextSize(shown.c_str()).x * z * 0.9f;
      text_at(dl, ImVec2(at.x - 9 * z - w, at.y - 8 * z), IM_COL32(200, 205, 215, 255), shown, z, 0.9f);
      // The input label in this output's row, measured in the real font,
      // must end before this one starts.
      for (size_t j = 0; j < box.ins.size() && !box.task && i < box.out_rows.size(); ++j) {
        if (j >= box.in_rows.size() || box.in_rows[j] != box.out_rows[i]) continue;
        const std::string& in = j < box.in_labels.size() ? box.in_labels[j] : box.ins[j].first;
        const float in_end = box.ins[j].second.x + 9 * z + ImGui::CalcTextSize(in.c_str()).x * z * 0.9f;
        if (in_end + 2 * z > at.x - 9 * z - w)
          items().record("label_collision/" + box.id, ImVec2(in_end, at.y - 8 * z),
                         ImVec2(at.x, at.y + 8 * z));
      }
      items().record("pin/" + box.id + "/out/" + col, ImVec2(at.x - 5, at.y - 5), ImVec2(at.x + 5, at.y + 5));
    }
  }
  draw_minimap(dl, map, world, ed.view, origin, size, hits);
  dl->PopClipRect();

  // Hover: the node's problems.
  if (hovered && ed.drag == GraphEditor::Drag::none && over_box) {
    auto it = node_issues.find(over_box->id);
    if (it != node_issues.end()) {
      ImGui::BeginTooltip();
      for (const core::GraphIssue* issue : it->second) {
        ImGui::TextColored(
            issue->severity == core::Severity::error ? ImVec4(1, 0.4f, 0.35f, 1) : ImVec4(1, 0.75f, 0.3f, 1),
            "%s", issue->message.c_str());
        if (!issue->hint.empty()) ImGui::TextDisabled("  %s", issue->hint.c_str());
      }
      ImGui::EndTooltip();
    }
  }
}

}  // namespace rlwb::ui
