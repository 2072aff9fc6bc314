#include "ui/graph/graph_document.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include "core/graph/yaml_edit.h"
#include "ui/graph/auto_layout.h"
#include "ui/graph/link_rules.h"

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
  doc.stray_layout_ = nlohmann::json::object();
  if (layout.is_object())
    for (auto& [key, value] : layout.items())
      if (std::none_of(doc.state_.exp.nodes.begin(), doc.state_.exp.nodes.end(),
                       [&](const core::NodeSpec& n) { return n.id == key; }))
        doc.stray_layout_[key] = value;
  for (const auto& node : doc.state_.exp.nodes) {
    if (!layout.is_object() || !layout.contains(node.id)) continue;
    const auto& at = layout[node.id];
    if (at.is_object() && at.contains("x") && at.contains("y") && at["x"].is_number() && at["y"].is_number())
      doc.state_.pos[node.id] = {at["x"].get<float>(), at["y"].get<float>()};
  }
  for (const std::string& base : doc.state_.exp.bases) {
    try {
      for (const core::NodeSpec& node : core::load_experiment_file(base).nodes)
        doc.base_nodes_[node.id] = {std::filesystem::path(base).filename().string(), node};
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
  for (const auto& [id, p] : state_.pos) {
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

bool GraphDocument::end_gesture() {
  if (!in_gesture_) return false;
  in_gesture_ = false;
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

bool GraphDocument::arrange() {
  begin_gesture();
  for (const auto& [id, at] : auto_layout(state_.exp)) set_position(id, at);
  return end_gesture();
}

std::string GraphDocument::unique_node_id(const std::string& base) const {
  std::string stem = base.empty() ? "node" : base;
  auto taken = [&](const std::string& id) {
    return std::any_of(state_.exp.nodes.begin(), state_.exp.nodes.end(),
                       [&](const core::NodeSpec& n) { return n.id == id; });
  };
  if (!taken(stem)) return stem;
  for (int i = 2;; ++i)
    if (!taken(stem + "_" + std::to_string(i))) return stem + "_" + std::to_string(i);
}

std::string GraphDocument::add_node(const std::string& call, Vec2 at, const std::vector<std::string>& in,
                                    const std::vector<std::string>& out,
                                    const std::vector<std::string>& in_ports,
                                    const std::vector<std::string>& out_ports) {
  begin_gesture();
  core::NodeSpec node;
  set_node_call(node, call);
  node.id = unique_node_id(node.method.empty() ? node.target : node.method);
  node.in = in;
  node.out = out;
  node.in_ports = in_ports;
  node.out_ports = out_ports;
  state_.exp.nodes.push_back(node);
  state_.pos[node.id] = at;
  end_gesture();
  return node.id;
}

void GraphDocument::delete_nodes(const std::set<std::string>& ids) {
  begin_gesture();
  auto& nodes = state_.exp.nodes;
  nodes.erase(std::remove_if(nodes.begin(), nodes.end(),
                             [&](const core::NodeSpec& n) { return ids.count(n.id) > 0; }),
              nodes.end());
  for (const auto& id : ids) state_.pos.erase(id);
  end_gesture();
}

bool GraphDocument::rename_node(const std::string& id, const std::string& new_id, std::string& error) {
  if (new_id == id) return true;
  if (new_id.empty()) {
    error = "a node needs an id";
    return false;
  }
  for (const auto& n : state_.exp.nodes)
    if (n.id == new_id) {
      error = "there is already a node '" + new_id + "'";
      return false;
    }
  begin_gesture();
  for (auto& n : state_.exp.nodes)
    if (n.id == id) n.id = new_id;
  if (auto it = state_.pos.find(id); it != state_.pos.end()) {
    state_.pos[new_id] = it->second;
    state_.pos.erase(id);
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
  for (const auto& node : exp.nodes) {
    Vec2 p = position(node.id);
    layout[node.id] = {{"x", static_cast<int64_t>(std::lround(p.x))},
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
