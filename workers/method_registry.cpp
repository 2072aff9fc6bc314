#include "workers/method_registry.h"

#include <stdexcept>

namespace rlwb::workers {

void RoleRegistry::add(RoleSpec spec) {
  if (roles_.count(spec.name)) throw std::logic_error("role '" + spec.name + "' registered twice");
  roles_.emplace(spec.name, std::move(spec));
}

const RoleSpec* RoleRegistry::find(const std::string& role) const {
  auto it = roles_.find(role);
  return it == roles_.end() ? nullptr : &it->second;
}

const MethodSpec* RoleRegistry::find_method(const std::string& role, const std::string& method) const {
  const RoleSpec* spec = find(role);
  if (!spec) return nullptr;
  for (auto& m : spec->methods)
    if (m.name == method) return &m;
  return nullptr;
}

nlohmann::json RoleRegistry::describe() const {
  nlohmann::json out = nlohmann::json::object();
  for (auto& [name, spec] : roles_) {
    nlohmann::json methods = nlohmann::json::object();
    for (auto& m : spec.methods)
      methods[m.name] = {{"mode", core::dispatch_mode_name(m.mode)}, {"keeps_rows", m.keeps_rows}};
    out[name] = methods;
  }
  return out;
}

std::vector<std::string> RoleRegistry::role_names() const {
  std::vector<std::string> names;
  for (auto& [name, spec] : roles_) names.push_back(name);
  return names;
}

}  // namespace rlwb::workers
