// The pins a node gets when the editor adds it (palette, node picker): the
// callee's declared ports, so that a new node is wired by name instead of
// starting bare. Used by graph_panels.cpp.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"

namespace rlwb::ui {

// A new node's columns and the ports they bind (NodeSpec's fields of the
// same names; ports empty where each column is its own port).
struct NodePins {
  std::vector<std::string> in, out, in_ports, out_ports;
};

// The ports the catalog declares for `call` ("model.method", "reward.method",
// "builtin.name"); known = false when the catalog is null, lacks the call
// or names its methods without ports.
core::CallPorts callee_ports(const core::Experiment& exp, const core::MethodCatalog* catalog,
                             const std::string& call);

// Every required input port and every output port, each bound to the column
// of its name. An output whose column some node already reads or writes
// gets a fresh one (x_sq -> x_sq_2, on port x_sq), so the new node never
// makes a column written twice. `fed_column` (a link dropped on empty
// canvas) feeds the first required input port, or a port of its own name
// when the ports are unknown or there is no required one.
NodePins pins_for_new_node(const core::Experiment& exp, const core::CallPorts& ports,
                           const std::string& fed_column = "");

// The columns some node of `exp` reads or writes.
std::set<std::string> columns_in_use(const core::Experiment& exp);
// `wanted`, else wanted_2, wanted_3, ... : the first not in `taken`; added to it.
std::string fresh_column(const std::string& wanted, std::set<std::string>& taken);

}  // namespace rlwb::ui
