// flatten_params: a run's nested config as dotted key/value rows for the
// params table (see tracking.h).
#include <set>

#include "core/tracking/tracking.h"

namespace rlwb::core {
namespace {

void flatten_into(const nlohmann::json& value, const std::string& key,
                  std::vector<std::pair<std::string, std::string>>& rows) {
  const auto child_key = [&key](const std::string& child) { return key.empty() ? child : key + "." + child; };
  if (value.is_object() && !value.empty()) {
    for (const auto& [child, child_value] : value.items()) {
      flatten_into(child_value, child_key(child), rows);
    }
  } else if (value.is_array() && !value.empty()) {
    for (size_t index = 0; index < value.size(); ++index) {
      flatten_into(value[index], child_key(std::to_string(index)), rows);
    }
  } else if (value.is_string()) {
    rows.emplace_back(key, value.get<std::string>());
  } else {
    rows.emplace_back(key, value.dump());  // numbers, booleans, null, {} and []
  }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> flatten_params(const nlohmann::json& config) {
  std::vector<std::pair<std::string, std::string>> rows;
  if (config.is_null()) return rows;
  if (!config.is_object() && !config.is_array()) {
    throw TrackingError("run params must be a JSON object (the experiment's config), got " +
                        std::string(config.type_name()) + ": " + config.dump());
  }
  if (config.empty()) return rows;
  flatten_into(config, "", rows);
  std::set<std::string> seen;
  for (const auto& row : rows) {
    if (!seen.insert(row.first).second) {
      throw TrackingError("run params: key '" + row.first +
                          "' appears twice once nested keys are joined with dots; rename one");
    }
  }
  return rows;
}

}  // namespace rlwb::core
