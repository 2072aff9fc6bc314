#include "ui/graph/phase_graphs.h"

#include <algorithm>

namespace rlwb::ui {

const std::vector<std::string>& canvas_phases() {
  // The phases core/config/trainer_options.h reads, in the order a run meets them.
  static const std::vector<std::string> phases = [] {
    std::vector<std::string> all = core::trainer_phases();
    for (const char* settings_only : {"samples", "save"}) all.emplace_back(settings_only);
    return all;
  }();
  return phases;
}

bool phase_takes_nodes(const std::string& phase) {
  const auto& phases = core::trainer_phases();
  return std::find(phases.begin(), phases.end(), phase) != phases.end();
}

std::string phase_title(const std::string& phase) {
  std::string title = phase;
  std::replace(title.begin(), title.end(), '_', ' ');
  return title;
}

std::string canvas_key(const std::string& phase, const std::string& id) {
  return phase.empty() ? id : phase + "/" + id;
}

std::string canvas_key(const NodeRef& ref) { return canvas_key(ref.phase, ref.id); }

NodeRef split_canvas_key(const std::string& key) {
  const size_t slash = key.find('/');
  if (slash == std::string::npos || !phase_takes_nodes(key.substr(0, slash))) return {"", key};
  return {key.substr(0, slash), key.substr(slash + 1)};
}

const std::vector<core::NodeSpec>& graph_nodes(const core::Experiment& exp, const std::string& phase) {
  static const std::vector<core::NodeSpec> none;
  if (phase.empty()) return exp.nodes;
  auto it = exp.phase_nodes.find(phase);
  return it == exp.phase_nodes.end() ? none : it->second;
}

std::vector<std::string> graphs_with_nodes(const core::Experiment& exp) {
  std::vector<std::string> out = {""};
  for (const auto& phase : core::trainer_phases())
    if (!graph_nodes(exp, phase).empty()) out.push_back(phase);
  return out;
}

std::vector<std::string> canvas_keys(const core::Experiment& exp) {
  std::vector<std::string> keys;
  for (const auto& phase : graphs_with_nodes(exp))
    for (const auto& node : graph_nodes(exp, phase)) keys.push_back(canvas_key(phase, node.id));
  return keys;
}

const core::NodeSpec* find_graph_node(const core::Experiment& exp, const std::string& key) {
  const NodeRef ref = split_canvas_key(key);
  for (const auto& node : graph_nodes(exp, ref.phase))
    if (node.id == ref.id) return &node;
  return nullptr;
}

core::NodeSpec* find_graph_node(core::Experiment& exp, const std::string& key) {
  return const_cast<core::NodeSpec*>(find_graph_node(static_cast<const core::Experiment&>(exp), key));
}

core::Experiment graph_view(const core::Experiment& exp, const std::string& phase) {
  core::Experiment view;
  view.pools = exp.pools;
  view.models = exp.models;
  view.rewards = exp.rewards;
  view.nodes = graph_nodes(exp, phase);
  return view;
}

void edit_graph(core::Experiment& exp, const std::string& phase,
                const std::function<void(core::Experiment&)>& edit) {
  if (phase.empty()) return edit(exp);
  core::Experiment view = graph_view(exp, phase);
  edit(view);
  exp.phase_nodes[phase] = std::move(view.nodes);
}

std::vector<Link> canvas_links(const core::Experiment& exp) {
  std::vector<Link> out;
  for (const auto& phase : graphs_with_nodes(exp))
    for (Link link : graph_links(phase.empty() ? exp : graph_view(exp, phase))) {
      link.from = canvas_key(phase, link.from);
      link.to = canvas_key(phase, link.to);
      out.push_back(std::move(link));
    }
  return out;
}

namespace {

// A node's `in` or `out` as the file writes it: a list, or {port: column}.
nlohmann::json bindings(const std::vector<std::string>& columns, const std::vector<std::string>& ports) {
  if (ports.empty()) return columns;
  nlohmann::json map = nlohmann::json::object();
  for (size_t i = 0; i < columns.size(); ++i) map[i < ports.size() ? ports[i] : columns[i]] = columns[i];
  return map;
}

}  // namespace

void save_phase_nodes(core::Experiment& exp, const std::string& phase) {
  const std::vector<core::NodeSpec>& nodes = graph_nodes(exp, phase);
  if (!exp.trainer.is_object()) exp.trainer = nlohmann::json::object();
  if (nodes.empty() && !exp.trainer.contains(phase)) return;
  nlohmann::json& section = exp.trainer[phase];
  if (!section.is_object()) section = nlohmann::json::object();
  const nlohmann::json written =
      section.contains("nodes") && section["nodes"].is_array() ? section["nodes"] : nlohmann::json::array();
  if (nodes.empty()) {
    section.erase("nodes");
    return;
  }
  nlohmann::json list = nlohmann::json::array();
  for (const auto& node : nodes) {
    nlohmann::json item = nlohmann::json::object();
    for (const auto& old : written)  // keys the editor does not know stay as written
      if (old.is_object() && old.value("id", nlohmann::json()) == nlohmann::json(node.id)) item = old;
    item["id"] = node.id;
    item["call"] = node.call;
    item["in"] = bindings(node.in, node.in_ports);
    item["out"] = bindings(node.out, node.out_ports);
    if (node.args.empty())
      item.erase("args");
    else
      item["args"] = node.args;
    list.push_back(item);
  }
  section["nodes"] = list;
}

std::vector<std::string> phase_summary(const core::Experiment& exp, const std::string& phase,
                                       size_t max_chars) {
  if (!exp.trainer.is_object() || !exp.trainer.contains(phase)) return {"not set"};
  const nlohmann::json& section = exp.trainer[phase];
  auto fit = [&](std::string line) {
    if (line.size() > max_chars) line = line.substr(0, max_chars - 3) + "...";
    return line;
  };
  auto text = [](const nlohmann::json& v) {
    if (v.is_string()) return v.get<std::string>();
    if (v.is_array() &&
        std::all_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_string(); })) {
      std::string joined;
      for (const auto& e : v) joined += (joined.empty() ? "" : ", ") + e.get<std::string>();
      return joined;
    }
    return v.dump();
  };
  std::vector<std::string> lines;
  if (!section.is_object()) return {fit(text(section))};  // save: [actor]
  for (const auto& [key, value] : section.items())
    if (key != "nodes") lines.push_back(fit(key + ": " + text(value)));
  if (lines.empty()) lines.push_back("(no settings)");
  return lines;
}

}  // namespace rlwb::ui
