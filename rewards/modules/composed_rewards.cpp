#include "rewards/modules/composed_rewards.h"

#include <algorithm>

namespace rlwb::rewards {
namespace {

void follow(const std::string& start, const std::string& name, const core::Experiment& exp,
            std::vector<std::string>& path, const std::string& setting) {
  path.push_back(name);
  auto it = exp.rewards.find(name);
  if (it != exp.rewards.end()) {
    for (const auto& next : named_rewards(it->second)) {
      if (next == start) {
        std::string chain;
        for (const auto& p : path) chain += p + " -> ";
        throw std::runtime_error("rewards." + start + ".config." + setting +
                                 ": the rewards named lead back to '" + start + "' (" + chain + start +
                                 "); a reward cannot contain itself");
      }
      if (std::find(path.begin(), path.end(), next) == path.end()) follow(start, next, exp, path, setting);
    }
  }
  path.pop_back();
}

void add_names_of_map(const nlohmann::json& config, const char* key, std::vector<std::string>& out) {
  if (!config.contains(key) || !config[key].is_object()) return;
  for (const auto& [name, value] : config[key].items()) out.push_back(name);
}

void add_names_in_values(const nlohmann::json& config, const char* key, std::vector<std::string>& out) {
  if (!config.contains(key) || !config[key].is_object()) return;
  for (const auto& [source, value] : config[key].items())
    if (value.is_string()) out.push_back(value.get<std::string>());
}

}  // namespace

std::vector<std::string> named_rewards(const core::RewardSpec& spec) {
  std::vector<std::string> names;
  if (!spec.config.is_object()) return names;
  if (spec.type == "weighted_sum") add_names_of_map(spec.config, "terms", names);
  if (spec.type == "by_data_source") {
    add_names_in_values(spec.config, "routes", names);
    if (spec.config.contains("default") && spec.config["default"].is_string())
      names.push_back(spec.config["default"].get<std::string>());
  }
  return names;
}

void check_no_cycle(const core::RewardSpec& spec, const core::Experiment& exp, const std::string& setting) {
  std::vector<std::string> path;
  follow(spec.name, spec.name, exp, path, setting);
}

std::unique_ptr<core::RewardModule> named_module(const std::string& where, const std::string& name,
                                                 const core::RewardSpec& spec, const core::Experiment& exp,
                                                 const core::RewardTypes* types) {
  auto it = exp.rewards.find(name);
  if (it == exp.rewards.end()) {
    std::string known;
    for (const auto& [other, unused] : exp.rewards)
      if (other != spec.name) known += (known.empty() ? "" : ", ") + other;
    throw std::runtime_error(where + ": there is no reward '" + name + "' in this file's rewards: (" +
                             (known.empty() ? "it has no other" : "it has: " + known) + ")");
  }
  if (!types) return nullptr;
  auto type_it = types->find(it->second.type);
  if (type_it == types->end())
    throw std::runtime_error(where + ": reward '" + name + "' has type '" + it->second.type +
                             "', which this build does not offer");
  return type_it->second.create(it->second, exp, *types);
}

std::vector<core::PortSpec> ports_any_may_read(const core::RewardTypes& types, const std::string& purpose) {
  std::vector<core::PortSpec> reads;
  for (const auto& [name, type] : types)
    for (const auto& [method, ports] : type.methods)
      for (const auto& port : ports.in) {
        if (port.name == "response_text" || port.name == "response_mask") continue;
        bool seen =
            std::any_of(reads.begin(), reads.end(), [&](const auto& p) { return p.name == port.name; });
        if (!seen)
          reads.push_back(core::optional_port(port.name, port.doc + " (for a " + name + " " + purpose + ")"));
      }
  return reads;
}

}  // namespace rlwb::rewards
