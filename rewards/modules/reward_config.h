// Reads a reward's `config:` map (graph file: rewards: {name: {type, config}})
// with the checks every type needs, so that each type states only its keys:
//   - a key the type does not know is an error (a typo must not silently
//     fall back to a default);
//   - a value of the wrong kind or out of range is an error;
// and every message names the key as `rewards.<name>.config.<key>` and says
// what to write instead. Used by each type's create() (rewards/modules/).
#pragma once

#include "core/graph/experiment.h"

#include <optional>
#include <set>
#include <string>

namespace rlwb::rewards {

class RewardConfig {
 public:
  // Throws when the config is not a map or has a key outside `keys`.
  RewardConfig(const core::RewardSpec& spec, const std::set<std::string>& keys);

  bool has(const std::string& key) const { return config_.contains(key); }
  const nlohmann::json& raw(const std::string& key) const { return config_.at(key); }

  std::string text(const std::string& key, const std::string& fallback) const;
  bool flag(const std::string& key, bool fallback) const;
  std::optional<double> number(const std::string& key) const;
  double number(const std::string& key, double fallback) const;
  // A number >= `min` (and <= `max` when given).
  double number_in(const std::string& key, double fallback, double min,
                   std::optional<double> max = std::nullopt) const;
  // One of `choices` (listed in the error message).
  std::string choice(const std::string& key, const std::string& fallback,
                     const std::set<std::string>& choices) const;

  // "rewards.<name>.config.<key>"
  std::string where(const std::string& key) const;
  [[noreturn]] void fail(const std::string& key, const std::string& what) const;

 private:
  std::string name_;
  nlohmann::json config_;
};

}  // namespace rlwb::rewards
