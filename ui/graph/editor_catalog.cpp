#include "ui/graph/editor_catalog.h"
#include "core/validate/validator.h"

#include <algorithm>
#include <limits>
#include <set>

namespace rlwb::ui {

core::MethodCatalog catalog_from_json(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text);
  // Each section bound to a name: iterating items() of a temporary dangles.
  const nlohmann::json roles = j.value("role_methods", nlohmann::json::object());
  const nlohmann::json rewards = j.value("reward_methods", nlohmann::json::object());
  const nlohmann::json builtins = j.value("builtins", nlohmann::json::array());
  const nlohmann::json tasks = j.value("task_columns", nlohmann::json::object());
  core::MethodCatalog c;
  for (const auto& [role, methods] : roles.items())
    for (const auto& m : methods) c.role_methods[role].insert(m.get<std::string>());
  for (const auto& [type, methods] : rewards.items())
    for (const auto& m : methods) c.reward_methods[type].insert(m.get<std::string>());
  for (const auto& b : builtins) c.builtins.insert(b.get<std::string>());
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
      if (node.target == "builtin")
        c.builtins.insert(node.method);
      else if (auto m = exp.models.find(node.target); m != exp.models.end())
        c.role_methods[m->second.role].insert(node.method);
      else if (auto r = exp.rewards.find(node.target); r != exp.rewards.end())
        c.reward_methods[r->second.type].insert(node.method);
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
