#include "ui/graph/experiment_edits.h"

#include "ui/graph/link_rules.h"

namespace rlwb::ui {
namespace {

using nlohmann::json;

bool taken(const core::Experiment& exp, const std::string& kind, const std::string& name) {
  if (kind == "pools") return exp.pools.count(name) > 0;
  return name == "builtin" || exp.models.count(name) > 0 || exp.rewards.count(name) > 0;
}

// "from.method" -> "to.method" for a call that targets `from`.
std::string retargeted(const std::string& call, const std::string& from, const std::string& to) {
  if (call.rfind(from + ".", 0) != 0) return call;
  return to + call.substr(from.size());
}

// Every call to `from` (the step's nodes, the phases' nodes as the trainer
// writes them and as the loader read them) now calls `to`.
void retarget_calls(core::Experiment& exp, const std::string& from, const std::string& to) {
  for (auto& node : exp.nodes) set_node_call(node, retargeted(node.call, from, to));
  for (auto& [phase, nodes] : exp.phase_nodes)
    for (auto& node : nodes) set_node_call(node, retargeted(node.call, from, to));
  for (const auto& phase : core::trainer_phases()) {
    if (!exp.trainer.is_object() || !exp.trainer.contains(phase)) continue;
    json& section = exp.trainer[phase];
    if (!section.is_object() || !section.contains("nodes") || !section["nodes"].is_array()) continue;
    for (json& node : section["nodes"])
      if (node.is_object() && node.contains("call") && node["call"].is_string())
        node["call"] = retargeted(node["call"].get<std::string>(), from, to);
  }
}

// A name in a text or a list of text at `value` (sync.from, sync.to, save).
void rename_in(json& value, const std::string& from, const std::string& to) {
  if (value.is_string() && value == from) value = to;
  if (value.is_array())
    for (json& item : value) rename_in(item, from, to);
}

// The raw document's entry follows a rename, so that keys only it holds
// (the writer merges the structs over it) stay with their model or pool.
void rename_raw_entry(core::Experiment& exp, const char* section, const std::string& from,
                      const std::string& to) {
  if (!exp.raw.is_object() || !exp.raw.contains(section) || !exp.raw[section].is_object()) return;
  json& entries = exp.raw[section];
  if (!entries.contains(from)) return;
  entries[to] = entries[from];
  entries.erase(from);
}

// Moves map[from] to map[to] under its new name; false when there is no
// `from` (or nothing to do).
template <typename Map>
bool move_entry(Map& map, const std::string& from, const std::string& to) {
  auto it = map.find(from);
  if (it == map.end() || from == to) return false;
  auto entry = it->second;
  map.erase(it);
  entry.name = to;
  map[to] = std::move(entry);
  return true;
}

}  // namespace

std::string resource_name_problem(const core::Experiment& exp, const std::string& kind,
                                  const std::string& name, const std::string& current) {
  if (name.empty()) return "a name cannot be empty";
  if (name.find_first_of(". \t/") != std::string::npos)
    return "'" + name + "' has a dot, a slash or a blank; a node's call is <name>.<method>";
  if (name == current) return "";
  if (taken(exp, kind, name))
    return kind == "pools" ? "there is already a pool '" + name + "'"
                           : "'" + name + "' is already a model, a reward or 'builtin'";
  return "";
}

std::string unused_resource_name(const core::Experiment& exp, const std::string& kind,
                                 const std::string& base) {
  if (!taken(exp, kind, base)) return base;
  for (int i = 2;; ++i)
    if (!taken(exp, kind, base + "_" + std::to_string(i))) return base + "_" + std::to_string(i);
}

void add_pool(core::Experiment& exp, const std::string& name, int workers, const std::string& device) {
  exp.pools[name] = core::PoolSpec{name, workers, device};
}

void rename_pool(core::Experiment& exp, const std::string& from, const std::string& to) {
  if (!move_entry(exp.pools, from, to)) return;
  rename_raw_entry(exp, "pools", from, to);
  for (auto& [name, model] : exp.models)
    if (model.pool == from) model.pool = to;
}

void delete_pool(core::Experiment& exp, const std::string& name) { exp.pools.erase(name); }

void add_model(core::Experiment& exp, const std::string& name, const std::string& role,
               const std::string& pool) {
  core::ModelSpec model;
  model.name = name;
  model.role = role;
  model.pool = pool;
  exp.models[name] = model;
}

void rename_model(core::Experiment& exp, const std::string& from, const std::string& to) {
  if (!move_entry(exp.models, from, to)) return;
  rename_raw_entry(exp, "models", from, to);
  retarget_calls(exp, from, to);
  if (exp.trainer.is_object()) {
    if (exp.trainer.contains("save")) rename_in(exp.trainer["save"], from, to);
    if (exp.trainer.contains("warm_start") && exp.trainer["warm_start"].is_object() &&
        exp.trainer["warm_start"].contains("sync") && exp.trainer["warm_start"]["sync"].is_object()) {
      json& sync = exp.trainer["warm_start"]["sync"];
      for (const char* key : {"from", "to"})
        if (sync.contains(key)) rename_in(sync[key], from, to);
    }
  }
}

void delete_model(core::Experiment& exp, const std::string& name) { exp.models.erase(name); }

void add_reward(core::Experiment& exp, const std::string& name, const std::string& type) {
  exp.rewards[name] = core::RewardSpec{name, type, json::object()};
}

void rename_reward(core::Experiment& exp, const std::string& from, const std::string& to) {
  if (!move_entry(exp.rewards, from, to)) return;
  rename_raw_entry(exp, "rewards", from, to);
  retarget_calls(exp, from, to);
}

void delete_reward(core::Experiment& exp, const std::string& name) { exp.rewards.erase(name); }

}  // namespace rlwb::ui
