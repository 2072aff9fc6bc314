#include "ui/graph/editor_catalog.h"
#include "core/validate/validator.h"

#include <algorithm>
#include <limits>
#include <set>

namespace rlwb::ui {

namespace {

// One port: a name, or {name, required, doc}.
core::PortSpec port_from_json(const nlohmann::json& j) {
  if (j.is_string()) return core::optional_port(j.get<std::string>(), "");
  return {j.at("name").get<std::string>(), j.value("required", false), j.value("doc", std::string())};
}

// A list of method names (ports unknown) or a map {method: {in, out, any_in}}.
core::MethodPorts methods_from_json(const nlohmann::json& j) {
  core::MethodPorts methods;
  if (j.is_array()) {
    for (const auto& m : j) methods[m.get<std::string>()];
    return methods;
  }
  for (const auto& [name, p] : j.items()) {
    core::CallPorts ports;
    ports.known = true;
    for (const auto& port : p.value("in", nlohmann::json::array())) ports.in.push_back(port_from_json(port));
    for (const auto& port : p.value("out", nlohmann::json::array()))
      ports.out.push_back(port_from_json(port));
    ports.any_in = p.value("any_in", false);
    methods[name] = ports;
  }
  return methods;
}

}  // namespace

core::MethodCatalog catalog_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  // Each section bound to a name: iterating items() of a temporary dangles.
  const nlohmann::json roles = j.value("role_methods", nlohmann::json::object());
  const nlohmann::json rewards = j.value("reward_methods", nlohmann::json::object());
  const nlohmann::json builtins = j.value("builtins", nlohmann::json::array());
  const nlohmann::json tasks = j.value("task_columns", nlohmann::json::object());
  core::MethodCatalog c;
  for (const auto& [role, methods] : roles.items()) c.role_methods[role] = methods_from_json(methods);
  for (const auto& [type, methods] : rewards.items()) c.reward_methods[type] = methods_from_json(methods);
  c.builtins = methods_from_json(builtins);
  for (const auto& [task, cols] : tasks.items()) c.task_columns[task] = cols.get<std::vector<std::string>>();
  c.machine_gpus = j.value("machine_gpus", 0);
  c.machine_cpu_workers = j.value("machine_cpu_workers", 64);
  return c;
}

core::MethodCatalog catalog_from_calls(const core::Experiment& exp) {
  core::MethodCatalog c;
  // A role or type the file declares is known even where nothing calls it.
  for (const auto& [name, model] : exp.models)
    if (!model.role.empty()) c.role_methods[model.role];
  for (const auto& [name, reward] : exp.rewards)
    if (!reward.type.empty()) c.reward_methods[reward.type];
  std::vector<std::string> from_task;
  // Each graph (the step's, each phase's) reads the task on its own.
  auto add_graph = [&](const std::vector<core::NodeSpec>& nodes) {
    std::set<std::string> written;
    for (const auto& node : nodes) written.insert(node.out.begin(), node.out.end());
    for (const auto& node : nodes) {
      // Ports unknown (CallPorts{}): the file's own bindings are not checked.
      if (node.target == "builtin")
        c.builtins[node.method];
      else if (auto m = exp.models.find(node.target); m != exp.models.end())
        c.role_methods[m->second.role][node.method];
      else if (auto r = exp.rewards.find(node.target); r != exp.rewards.end())
        c.reward_methods[r->second.type][node.method];
      for (const auto& column : node.in)
        if (!written.count(column) &&
            std::find(from_task.begin(), from_task.end(), column) == from_task.end())
          from_task.push_back(column);
    }
  };
  add_graph(exp.nodes);
  for (const auto& [phase, nodes] : exp.phase_nodes) add_graph(nodes);
  if (exp.task.contains("name") && exp.task["name"].is_string() &&
      !exp.task["name"].get<std::string>().empty())
    c.task_columns[exp.task["name"].get<std::string>()] = from_task;
  c.machine_gpus = c.machine_cpu_workers = std::numeric_limits<int>::max();
  return c;
}

}  // namespace rlwb::ui
