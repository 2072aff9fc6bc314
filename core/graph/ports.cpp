// Port declarations and the wanted-outputs query (ports.h).
#include "core/graph/ports.h"

#include <algorithm>

namespace rlwb::core {

PortSpec required_port(std::string name, std::string doc) { return {std::move(name), true, std::move(doc)}; }
PortSpec optional_port(std::string name, std::string doc) { return {std::move(name), false, std::move(doc)}; }
PortSpec out_port(std::string name, std::string doc) { return {std::move(name), false, std::move(doc)}; }

namespace {
const PortSpec* find_port(const std::vector<PortSpec>& ports, const std::string& name) {
  auto it = std::find_if(ports.begin(), ports.end(), [&](const PortSpec& p) { return p.name == name; });
  return it == ports.end() ? nullptr : &*it;
}
}  // namespace

const PortSpec* CallPorts::find_in(const std::string& port) const { return find_port(in, port); }
const PortSpec* CallPorts::find_out(const std::string& port) const { return find_port(out, port); }

CallPorts call_ports(std::vector<PortSpec> in, std::vector<PortSpec> out) {
  CallPorts ports;
  ports.in = std::move(in);
  ports.out = std::move(out);
  ports.known = true;
  return ports;
}

WantedPorts WantedPorts::from_context(const nlohmann::json& context) {
  if (!context.is_object() || !context.contains("out") || !context["out"].is_array()) return {};
  return WantedPorts(context["out"].get<std::vector<std::string>>());
}

bool WantedPorts::wants(const std::string& port) const {
  return !ports_ || std::find(ports_->begin(), ports_->end(), port) != ports_->end();
}

}  // namespace rlwb::core
