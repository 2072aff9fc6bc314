// Checks of each node's identity and call: ids are present and unique,
// `call` names a model method of the model's role, a method of the reward's
// type, or a builtin the controller runs, and the node's `in`/`out` bind
// ports that callee has, every required input among them.
#include <map>

#include "core/validate/checks.h"
#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

std::vector<std::string> method_names(const MethodPorts& methods) {
  std::vector<std::string> names;
  for (const auto& [name, _] : methods) names.push_back(name);
  return names;
}

std::vector<std::string> port_names(const std::vector<PortSpec>& ports) {
  std::vector<std::string> names;
  for (const auto& port : ports) names.push_back(port.name);
  return names;
}

// The methods `target` offers, or nothing when it (or its role/type) is
// unknown; `owner` describes it for messages.
struct Target {
  bool known = false;      // target names a model, reward or "builtin"
  bool checkable = false;  // and its method list is known
  const MethodPorts* methods = nullptr;
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

// The node's bindings against the callee's ports: each port it names
// exists, and every required input is bound.
void check_ports(IssueList& out, std::size_t index, const CallPorts& ports) {
  if (!ports.known) return;  // a catalog that names only methods
  const NodeSpec& node = out.nodes()[index];
  const std::string callee = "'" + node.call + "'";
  auto unknown = [&](const std::string& field, const std::string& kind, const std::string& port,
                     const std::vector<PortSpec>& declared) {
    const auto names = port_names(declared);
    out.add(out.node_line(index, field), node.id, callee + " has no " + kind + " port '" + port + "'",
            "its " + kind + " ports: " + list_names(names) + "; to bind a column named otherwise, write " +
                field + ": {<port>: " + port + ", ...}." + did_you_mean(port, names));
  };
  for (std::size_t i = 0; i < node.in.size(); ++i)
    if (!ports.any_in && !ports.find_in(node.in_port(i))) unknown("in", "input", node.in_port(i), ports.in);
  for (std::size_t i = 0; i < node.out.size(); ++i)
    if (!ports.find_out(node.out_port(i))) unknown("out", "output", node.out_port(i), ports.out);
  for (const auto& port : ports.in) {
    if (!port.required) continue;
    bool bound = false;
    for (std::size_t i = 0; i < node.in.size() && !bound; ++i) bound = node.in_port(i) == port.name;
    if (!bound)
      out.add(
          out.node_line(index, "in"), node.id,
          callee + " needs input port '" + port.name + "' (" + port.doc + "), which the node does not bind",
          "add " + port.name + " to in: when a column of that name exists, or bind another column: in: {" +
              port.name + ": <column>, ...}");
  }
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
  if (!target.checkable) return;
  if (auto method = target.methods->find(node.method); method != target.methods->end()) {
    check_ports(out, index, method->second);
    return;
  }
  const auto methods = method_names(*target.methods);
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
