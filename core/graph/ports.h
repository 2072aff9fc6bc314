// Named ports: how every node (worker method, builtin, reward module) takes
// its columns. A callable declares its ports where it is registered
// (workers/method_registry.h, core/controller/builtins.h,
// core/controller/reward_module.h); a graph node binds each port it uses to
// a column (`in: [prompts]` binds port `prompts` to the column of that name,
// `in: {ground_truth: answers}` names them apart); the validator checks the
// bindings against the declarations (core/validate/node_checks.cpp), and the
// runner renames the columns to ports before the call and the ports back to
// columns after it (core/controller/node_ports.h). So a callee sees only its
// own port names, never a graph's column names. No LibTorch here.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace rlwb::core {

// One input or output of a callable.
struct PortSpec {
  std::string name;
  bool required = false;  // inputs only: a node must bind it
  std::string doc;        // one line, for hints and the GUI
  bool operator==(const PortSpec&) const = default;
};

PortSpec required_port(std::string name, std::string doc);
PortSpec optional_port(std::string name, std::string doc);
// An output port (produced when the node binds it; never required).
PortSpec out_port(std::string name, std::string doc);

// The ports of one callable.
struct CallPorts {
  std::vector<PortSpec> in, out;
  // The ports are declared. False in a catalog that names only methods (a
  // catalog file without ports, the editor's catalog implied by a file):
  // then any port is accepted and nothing about ports is checked.
  bool known = false;
  // Also takes input ports of any name (builtin.add sums them all).
  bool any_in = false;
  bool operator==(const CallPorts&) const = default;

  const PortSpec* find_in(const std::string& port) const;
  const PortSpec* find_out(const std::string& port) const;
};

// Declared ports (known = true).
CallPorts call_ports(std::vector<PortSpec> in, std::vector<PortSpec> out);

// A callable's methods and their ports: method name -> ports.
using MethodPorts = std::map<std::string, CallPorts>;

// Which output ports a node binds to columns, as the callee sees it: the
// runner keeps only those from the reply, so a callee may skip the work
// for the others (decoding response text, say). One type for every kind of
// node; default-constructed it wants every port (a direct call, as in
// tests, that names none).
class WantedPorts {
 public:
  WantedPorts() = default;
  explicit WantedPorts(std::vector<std::string> ports) : ports_(std::move(ports)) {}
  // From a worker call's context: its "out" list when it has one.
  static WantedPorts from_context(const nlohmann::json& context);

  bool wants(const std::string& port) const;
  // The ports named, or nullopt when every port is wanted.
  const std::optional<std::vector<std::string>>& named() const { return ports_; }

 private:
  std::optional<std::vector<std::string>> ports_;
};

}  // namespace rlwb::core
