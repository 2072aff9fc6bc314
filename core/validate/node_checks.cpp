// Checks of each node's identity and call: ids are present and unique, and
// `call` names a model method of the model's role, a method of the reward's
// type, or a builtin the controller runs.
#include <map>

#include "core/validate/checks.h"
#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

std::vector<std::string> sorted(const std::set<std::string>& names) { return {names.begin(), names.end()}; }

// The methods `target` offers, or nothing when it (or its role/type) is
// unknown; `owner` describes it for messages.
struct Target {
  bool known = false;      // target names a model, reward or "builtin"
  bool checkable = false;  // and its method list is known
  const std::set<std::string>* methods = nullptr;
  std::string owner;
};

Target resolve_target(const Experiment& exp, const MethodCatalog& catalog, const std::string& name) {
  Target t;
  if (name == "builtin") {
    t = {true, true, &catalog.builtins, "builtin"};
  } else if (auto model = exp.models.find(name); model != exp.models.end()) {
    auto role = catalog.role_methods.find(model->second.role);
    t.known = true;
    t.owner = "model '" + name + "' (role '" + model->second.role + "')";
    if (role != catalog.role_methods.end()) t.checkable = true, t.methods = &role->second;
  } else if (auto reward = exp.rewards.find(name); reward != exp.rewards.end()) {
    auto type = catalog.reward_methods.find(reward->second.type);
    t.known = true;
    t.owner = "reward '" + name + "' (type '" + reward->second.type + "')";
    if (type != catalog.reward_methods.end()) t.checkable = true, t.methods = &type->second;
  }
  return t;
}

void check_call(IssueList& out, const MethodCatalog& catalog, std::size_t index) {
  const Experiment& exp = out.exp();
  const NodeSpec& node = out.nodes()[index];
  const KeyLine line = out.node_line(index, "call");
  const std::string shape = "write call: <model>.<method>, <reward>.<method> or builtin.<name>";
  if (node.call.empty()) {
    out.add(out.node_line(index), node.id, "has no call", shape);
    return;
  }
  if (node.target.empty() || node.method.empty()) {
    out.add(line, node.id, "call '" + node.call + "' is not <target>.<method>", shape);
    return;
  }
  Target target = resolve_target(exp, catalog, node.target);
  if (!target.known) {
    std::vector<std::string> models, rewards;
    for (const auto& [name, _] : exp.models) models.push_back(name);
    for (const auto& [name, _] : exp.rewards) rewards.push_back(name);
    std::string hint = "models: " + list_names(models) + "; rewards: " + list_names(rewards) +
                       "; builtins are called as builtin.<name>.";
    std::vector<std::string> names = models;
    names.insert(names.end(), rewards.begin(), rewards.end());
    names.push_back("builtin");
    out.add(line, node.id, "calls '" + node.target + "', which is not a model, a reward or 'builtin'",
            hint + did_you_mean(node.target, names));
    return;
  }
  // A model with an unknown role is reported at the model, not at each call.
  if (!target.checkable || target.methods->count(node.method)) return;
  const auto methods = sorted(*target.methods);
  const std::string choices = list_names(methods) + "." + did_you_mean(node.method, methods);
  if (node.target == "builtin")
    out.add(line, node.id, "calls builtin '" + node.method + "' that the controller does not have",
            "builtins: " + choices);
  else
    out.add(line, node.id, target.owner + " has no method '" + node.method + "'",
            target.owner + " has: " + choices);
}

}  // namespace

void check_node_calls(IssueList& out, const MethodCatalog& catalog) {
  std::map<std::string, std::size_t> first_with_id;
  const auto& nodes = out.nodes();
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const NodeSpec& node = nodes[i];
    if (node.id.empty()) {
      out.add(out.node_line(i), "",
              "node " + std::to_string(i + 1) + " (calling '" + node.call + "') has no id",
              "add id: <short name>; other nodes' layout and messages refer to it");
    } else if (auto [first, inserted] = first_with_id.emplace(node.id, i); !inserted) {
      out.add(out.node_line(i, "id"), node.id,
              "the id is used twice (first on line " + std::to_string(out.node_line(first->second)) + ")",
              "give each node its own id");
    }
    check_call(out, catalog, i);
  }
}

}  // namespace rlwb::core::graph_detail
