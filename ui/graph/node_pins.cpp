#include "ui/graph/node_pins.h"

namespace rlwb::ui {

core::CallPorts callee_ports(const core::Experiment& exp, const core::MethodCatalog* catalog,
                             const std::string& call) {
  if (!catalog) return {};
  const auto dot = call.find('.');
  if (dot == std::string::npos) return {};
  const std::string target = call.substr(0, dot), method = call.substr(dot + 1);
  const core::MethodPorts* methods = nullptr;
  if (target == "builtin") {
    methods = &catalog->builtins;
  } else if (auto m = exp.models.find(target); m != exp.models.end()) {
    if (auto r = catalog->role_methods.find(m->second.role); r != catalog->role_methods.end())
      methods = &r->second;
  } else if (auto w = exp.rewards.find(target); w != exp.rewards.end()) {
    if (auto r = catalog->reward_methods.find(w->second.type); r != catalog->reward_methods.end())
      methods = &r->second;
  }
  if (!methods) return {};
  auto it = methods->find(method);
  return it == methods->end() ? core::CallPorts{} : it->second;
}

std::set<std::string> columns_in_use(const core::Experiment& exp) {
  std::set<std::string> used;
  for (const auto& node : exp.nodes) {
    used.insert(node.in.begin(), node.in.end());
    used.insert(node.out.begin(), node.out.end());
  }
  return used;
}

std::string fresh_column(const std::string& wanted, std::set<std::string>& taken) {
  std::string name = wanted;
  for (int i = 2; taken.count(name); ++i) name = wanted + "_" + std::to_string(i);
  taken.insert(name);
  return name;
}

NodePins pins_for_new_node(const core::Experiment& exp, const core::CallPorts& ports,
                           const std::string& fed_column) {
  NodePins pins;
  std::vector<std::string> in_ports, out_ports;
  bool fed = fed_column.empty();
  if (ports.known) {
    for (const auto& port : ports.in) {
      if (!port.required) continue;
      in_ports.push_back(port.name);
      pins.in.push_back(fed ? port.name : fed_column);
      fed = true;
    }
    std::set<std::string> taken = columns_in_use(exp);
    for (const auto& port : ports.out) {
      out_ports.push_back(port.name);
      pins.out.push_back(fresh_column(port.name, taken));
    }
  }
  if (!fed) {  // no required port took it: a port of its own name
    in_ports.push_back(fed_column);
    pins.in.push_back(fed_column);
  }
  // The list form where every column is its port, as a person writes it.
  if (in_ports != pins.in) pins.in_ports = in_ports;
  if (out_ports != pins.out) pins.out_ports = out_ports;
  return pins;
}

}  // namespace rlwb::ui
