// Columns <-> ports around a node's call (node_ports.h).
#include "core/controller/node_ports.h"

#include <stdexcept>

namespace rlwb::core {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string s;
  for (const auto& n : names) s += (s.empty() ? "" : ", ") + n;
  return s.empty() ? "(nothing)" : s;
}

}  // namespace

Batch port_inputs(const NodeSpec& node, const Batch& state) {
  Batch input;
  for (std::size_t i = 0; i < node.in.size(); ++i) input.share_column(state, node.in[i], node.in_port(i));
  input.meta() = state.meta();
  return input;
}

std::vector<std::string> wanted_out_ports(const NodeSpec& node) {
  std::vector<std::string> ports;
  for (std::size_t i = 0; i < node.out.size(); ++i) ports.push_back(node.out_port(i));
  return ports;
}

Batch column_outputs(const NodeSpec& node, const Batch& reply) {
  Batch out;
  for (std::size_t i = 0; i < node.out.size(); ++i) {
    const std::string& port = node.out_port(i);
    if (!reply.has(port))
      throw std::runtime_error("node '" + node.id + "' (" + node.call + ") did not return its output port '" +
                               port + "'" + (port == node.out[i] ? "" : " (column '" + node.out[i] + "')") +
                               "; it returned: " + join(reply.column_names()));
    out.share_column(reply, port, node.out[i]);
  }
  return out;
}

}  // namespace rlwb::core
