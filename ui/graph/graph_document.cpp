#include "ui/graph/graph_document.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "core/graph/yaml_edit.h"
#include "ui/graph/auto_layout.h"
#include "ui/graph/link_rules.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"

namespace rlwb::ui {
namespace {

constexpr float kColumnWidth = 280, kRowHeight = 170, kMarginX = 220, kMarginY = 40;

std::string read_file(const std::string& path, bool& ok) {
  std::ifstream in(path, std::ios::binary);
  ok = static_cast<bool>(in);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace

GraphDocument GraphDocument::open(const std::string& path) {
  bool ok = false;
  std::string text = read_file(path, ok);
  if (!ok) {
    GraphDocument doc;
    doc.path_ = path;
    doc.load_issues_.push_back(
        {path, 0, "", "cannot read the file", "check the path", core::Severity::error});
    return doc;
  }
  return from_text(text, path);
}

GraphDocument GraphDocument::from_text(const std::string& text, const std::string& path) {
  GraphDocument doc;
  doc.path_ = path;
  doc.original_text_ = text;
  try {
    doc.state_.exp = core::load_experiment_text(text, path);
    doc.loaded_ = true;
  } catch (const core::GraphError& e) {
    doc.load_issues_ = e.issues();
    return doc;
  }
  const nlohmann::json& layout = doc.state_.exp.layout;
  const std::vector<std::string> keys = canvas_keys(doc.state_.exp);
  doc.stray_layout_ = nlohmann::json::object();
  if (layout.is_object())
    for (auto& [key, value] : layout.items())
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) doc.stray_layout_[key] = value;
  for (const auto& key : keys) {
    if (!layout.is_object() || !layout.contains(key)) continue;
    const auto& at = layout[key];
    if (at.is_object() && at.contains("x") && at.contains("y") && at["x"].is_number() && at["y"].is_number())
      doc.state_.pos[key] = {at["x"].get<float>(), at["y"].get<float>()};
  }
  for (const std::string& base : doc.state_.exp.bases) {
    try {
      const core::Experiment loaded = core::load_experiment_file(base);
      const std::string name = std::filesystem::path(base).filename().string();
      for (const core::NodeSpec& node : loaded.nodes) doc.base_nodes_[node.id] = {name, node};
      doc.base_documents_.push_back({name, loaded.raw});
    } catch (const std::exception&) {  // the base loaded as part of this file; alone it may not
    }
  }
  doc.place_unpositioned_nodes();
  doc.state_.id = doc.next_id_++;
  doc.saved_id_ = doc.state_.id;
  return doc;
}

// A file without positions is laid out whole. Otherwise the user's
// positions are kept, and nodes without a layout entry go in columns by
// dependency depth, right of the task box, below whatever is already placed
// in that column.
void GraphDocument::place_unpositioned_nodes() {
  const auto& exp = state_.exp;
  if (state_.pos.empty()) {
    state_.pos = auto_layout(exp);
    return;
  }
  auto writers = column_writers(exp);
  std::map<std::string, int> depth;
  for (size_t pass = 0; pass <= exp.nodes.size(); ++pass) {
    bool changed = false;
    for (const auto& node : exp.nodes) {
      int d = 0;
      for (const auto& column : node.in) {
        auto it = writers.find(column);
        if (it == writers.end()) continue;
        for (const auto& w : it->second)
          if (w != node.id && depth.count(w)) d = std::max(d, depth[w] + 1);
      }
      if (d > static_cast<int>(exp.nodes.size())) d = static_cast<int>(exp.nodes.size());  // cycles
      if (!depth.count(node.id) || depth[node.id] != d) {
        depth[node.id] = d;
        changed = true;
      }
    }
    if (!changed) break;
  }
  std::map<int, float> next_y;
  for (const auto& [key, p] : state_.pos) {
    if (!split_canvas_key(key).phase.empty()) continue;  // a phase's block is no column of the step's
    int column = static_cast<int>(std::lround((p.x - kMarginX) / kColumnWidth));
    next_y[column] = std::max(next_y[column], p.y + kRowHeight);
  }
  for (const auto& node : exp.nodes) {
    if (state_.pos.count(node.id)) continue;
    int column = depth[node.id];
    float y = next_y.count(column) ? next_y[column] : kMarginY;
    state_.pos[node.id] = {kMarginX + column * kColumnWidth, y};
    next_y[column] = y + kRowHeight;
  }
  place_unpositioned_phase_nodes();
}

// A phase none of whose nodes has a position is laid out as a block below
// everything placed; a phase's node missing among placed ones goes below
// that phase's boxes, so it stays inside the phase's frame.
void GraphDocument::place_unpositioned_phase_nodes() {
  const auto& exp = state_.exp;
  float x0 = 1e30f;  // a block lines up with the step's leftmost node
  for (const auto& node : exp.nodes) x0 = std::min(x0, position(node.id).x);
  if (exp.nodes.empty()) x0 = kMarginX + kTaskWidth;
  for (const auto& phase : graphs_with_nodes(exp)) {
    if (phase.empty()) continue;
    const auto& nodes = graph_nodes(exp, phase);
    const bool any = std::any_of(nodes.begin(), nodes.end(), [&](const core::NodeSpec& n) {
      return state_.pos.count(canvas_key(phase, n.id));
    });
    if (!any) {
      const float top = next_block_top(exp, state_.pos, kMarginY) + kGroupTitle + kGroupPad;
      state_.pos.merge(auto_layout_graph(exp, phase, x0, top));
      continue;
    }
    float left = 1e30f, bottom = -1e30f;
    for (const auto& node : nodes)
      if (auto it = state_.pos.find(canvas_key(phase, node.id)); it != state_.pos.end()) {
        left = std::min(left, it->second.x);
        bottom = std::max(bottom, it->second.y + node_size(exp, node).y);
      }
    for (const auto& node : nodes)
      if (state_.pos.emplace(canvas_key(phase, node.id), Vec2{left, bottom + kLayoutNodeGap}).second)
        bottom += kLayoutNodeGap + node_size(exp, node).y;
  }
}

Vec2 GraphDocument::position(const std::string& node) const {
  auto it = state_.pos.find(node);
  return it == state_.pos.end() ? Vec2{} : it->second;
}

void GraphDocument::set_position(const std::string& node, Vec2 p) { state_.pos[node] = p; }

void GraphDocument::begin_gesture() {
  if (in_gesture_) return;
  gesture_start_ = state_;
  in_gesture_ = true;
}

bool GraphDocument::same_state(const GraphState& a, const GraphState& b) const {
  if (a.pos != b.pos || a.exp.nodes.size() != b.exp.nodes.size()) return false;
  return core::same_content(a.exp, b.exp);
}

void GraphDocument::save_changed_phases(const core::Experiment& before) {
  for (const auto& phase : core::trainer_phases()) {
    const auto& now = graph_nodes(state_.exp, phase);
    const auto& then = graph_nodes(before, phase);
    // Compared without lines: an edit never changes them, a reload does.
    auto same = [](const core::NodeSpec& a, core::NodeSpec b) {
      b.line = a.line;
      return a == b;
    };
    if (!std::equal(now.begin(), now.end(), then.begin(), then.end(), same))
      save_phase_nodes(state_.exp, phase);
  }
}

bool GraphDocument::end_gesture() {
  if (!in_gesture_) return false;
  in_gesture_ = false;
  save_changed_phases(gesture_start_.exp);
  if (same_state(gesture_start_, state_)) {
    state_.id = gesture_start_.id;
    return false;
  }
  undo_.push(std::move(gesture_start_));
  state_.id = next_id_++;
  return true;
}

void GraphDocument::cancel_gesture() {
  if (!in_gesture_) return;
  in_gesture_ = false;
  state_ = std::move(gesture_start_);
}

bool GraphDocument::undo() {
  if (in_gesture_) end_gesture();
  return undo_.undo(state_);
}

bool GraphDocument::redo() {
  if (in_gesture_) end_gesture();
  return undo_.redo(state_);
}

std::string GraphDocument::node_origin(const core::NodeSpec& node) const {
  auto it = base_nodes_.find(node.id);
  if (it == base_nodes_.end()) return "";
  const auto& [file, base] = it->second;
  std::vector<std::string> set_here;
  if (node.call != base.call) set_here.push_back("call");
  if (node.in != base.in || node.in_ports != base.in_ports) set_here.push_back("in");
  if (node.out != base.out || node.out_ports != base.out_ports) set_here.push_back("out");
  if (node.args != base.args) set_here.push_back("args");
  std::string origin = "from " + file;
  for (size_t i = 0; i < set_here.size(); ++i) origin += (i == 0 ? "; " : ", ") + set_here[i];
  return set_here.empty() ? origin : origin + " set here";
}

std::string GraphDocument::setting_origin(const std::string& path, const nlohmann::json& value) const {
  const auto written = state_.exp.line_files.find(path);
  if (written == state_.exp.line_files.end()) return "";
  // The latest base that has the path is the one the merge took it from.
  for (auto base = base_documents_.rbegin(); base != base_documents_.rend(); ++base) {
    const nlohmann::json* at = &base->second;
    std::stringstream parts(path);
    for (std::string key; at && std::getline(parts, key, '.');)
      at = at->is_object() && at->contains(key) ? &(*at)[key] : nullptr;
    if (at) return *at == value ? base->first : "";
  }
  return "";
}

bool GraphDocument::arrange() {
  begin_gesture();
  for (const auto& [id, at] : auto_layout(state_.exp)) set_position(id, at);
  return end_gesture();
}

std::string GraphDocument::unique_node_id(const std::string& base, const std::string& phase) const {
  std::string stem = base.empty() ? "node" : base;
  const auto& nodes = graph_nodes(state_.exp, phase);
  auto taken = [&](const std::string& id) {
    return std::any_of(nodes.begin(), nodes.end(), [&](const core::NodeSpec& n) { return n.id == id; });
  };
  if (!taken(stem)) return stem;
  for (int i = 2;; ++i)
    if (!taken(stem + "_" + std::to_string(i))) return stem + "_" + std::to_string(i);
}

std::string GraphDocument::add_node(const std::string& call, Vec2 at, const std::vector<std::string>& in,
                                    const std::vector<std::string>& out,
                                    const std::vector<std::string>& in_ports,
                                    const std::vector<std::string>& out_ports, const std::string& phase) {
  begin_gesture();
  core::NodeSpec node;
  set_node_call(node, call);
  node.id = unique_node_id(node.method.empty() ? node.target : node.method, phase);
  node.in = in;
  node.out = out;
  node.in_ports = in_ports;
  node.out_ports = out_ports;
  edit_graph(state_.exp, phase, [&](core::Experiment& graph) { graph.nodes.push_back(node); });
  state_.pos[canvas_key(phase, node.id)] = at;
  end_gesture();
  return canvas_key(phase, node.id);
}

void GraphDocument::delete_nodes(const std::set<std::string>& keys) {
  begin_gesture();
  for (const auto& phase : graphs_with_nodes(state_.exp))
    edit_graph(state_.exp, phase, [&](core::Experiment& graph) {
      std::erase_if(graph.nodes,
                    [&](const core::NodeSpec& n) { return keys.count(canvas_key(phase, n.id)) > 0; });
    });
  for (const auto& key : keys) state_.pos.erase(key);
  end_gesture();
}

bool GraphDocument::rename_node(const std::string& key, const std::string& new_id, std::string& error) {
  const NodeRef ref = split_canvas_key(key);
  if (new_id == ref.id) return true;
  if (new_id.empty()) {
    error = "a node needs an id";
    return false;
  }
  if (unique_node_id(new_id, ref.phase) != new_id) {
    error = "there is already a node '" + new_id + "'" +
            (ref.phase.empty() ? "" : " in " + phase_title(ref.phase));
    return false;
  }
  begin_gesture();
  edit_graph(state_.exp, ref.phase, [&](core::Experiment& graph) {
    for (auto& n : graph.nodes)
      if (n.id == ref.id) n.id = new_id;
  });
  if (auto it = state_.pos.find(key); it != state_.pos.end()) {
    state_.pos[canvas_key(ref.phase, new_id)] = it->second;
    state_.pos.erase(key);
  }
  end_gesture();
  return true;
}

core::Experiment GraphDocument::experiment_to_save() const {
  core::Experiment exp = state_.exp;
  // Layout entries of ids that are no node (the validator warns about them)
  // are the user's business: keep them. Nodes get their canvas position.
  nlohmann::json layout = nlohmann::json::object();
  for (auto& [key, value] : stray_layout_.items())
    if (!state_.pos.count(key)) layout[key] = value;
  for (const auto& key : canvas_keys(exp)) {  // phases' nodes as "<phase>/<id>"
    Vec2 p = position(key);
    layout[key] = {{"x", static_cast<int64_t>(std::lround(p.x))},
                   {"y", static_cast<int64_t>(std::lround(p.y))}};
  }
  exp.layout = layout;
  return exp;
}

std::string GraphDocument::text_to_save() const {
  if (!dirty()) return original_text_;
  return core::edit_experiment_text(original_text_, path_, experiment_to_save()).text;
}

void GraphDocument::save() { save_as(path_); }

void GraphDocument::save_as(const std::string& path) {
  if (!loaded_)
    throw std::runtime_error(path_ +
                             " could not be read as a graph file; fix it in a text editor "
                             "(the editor does not overwrite a file it could not load)");
  if (path.empty()) throw std::runtime_error("no file name to save to");
  // `defaults:` names its bases relative to the file: saved into another
  // folder, the file would lose them, so it gets the resolved experiment.
  namespace fs = std::filesystem;
  auto folder = [](const std::string& file) { return fs::absolute(file).parent_path().lexically_normal(); };
  const bool bases_stay_reachable = state_.exp.bases.empty() || folder(path) == folder(path_);
  std::string text = bases_stay_reachable ? text_to_save() : core::experiment_to_yaml(experiment_to_save());
  std::string tmp = path + ".rlwb-save.tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw std::runtime_error("cannot replace " + path + ": " + ec.message());
  }
  path_ = path;
  original_text_ = text;
  saved_id_ = state_.id;
}

}  // namespace rlwb::ui
