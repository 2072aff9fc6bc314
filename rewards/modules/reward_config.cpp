#include "rewards/modules/reward_config.h"

#include <stdexcept>

namespace rlwb::rewards {
namespace {

std::string joined(const std::set<std::string>& items) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

}  // namespace

RewardConfig::RewardConfig(const core::RewardSpec& spec, const std::set<std::string>& keys)
    : name_(spec.name), config_(spec.config.is_null() ? nlohmann::json::object() : spec.config) {
  if (!config_.is_object())
    throw std::runtime_error("rewards." + name_ + ".config: must be a map of settings, got " +
                             config_.dump());
  for (const auto& [key, value] : config_.items())
    if (!keys.count(key))
      fail(key, "is not a setting of type '" + spec.type + "' (its settings: " + joined(keys) +
                    "; see docs/rewards.md)");
}

std::string RewardConfig::where(const std::string& key) const {
  return "rewards." + name_ + ".config." + key;
}

void RewardConfig::fail(const std::string& key, const std::string& what) const {
  throw std::runtime_error(where(key) + ": " + what);
}

std::string RewardConfig::text(const std::string& key, const std::string& fallback) const {
  if (!has(key)) return fallback;
  const auto& v = config_.at(key);
  if (!v.is_string()) fail(key, "must be a string, got " + v.dump());
  return v.get<std::string>();
}

bool RewardConfig::flag(const std::string& key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = config_.at(key);
  if (!v.is_boolean()) fail(key, "must be true or false, got " + v.dump());
  return v.get<bool>();
}

std::optional<double> RewardConfig::number(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  const auto& v = config_.at(key);
  if (!v.is_number()) fail(key, "must be a number, got " + v.dump());
  return v.get<double>();
}

double RewardConfig::number(const std::string& key, double fallback) const {
  return number(key).value_or(fallback);
}

double RewardConfig::number_in(const std::string& key, double fallback, double min,
                               std::optional<double> max) const {
  double v = number(key, fallback);
  if (v < min || (max && v > *max)) {
    std::string range = max ? "between " + nlohmann::json(min).dump() + " and " + nlohmann::json(*max).dump()
                            : "at least " + nlohmann::json(min).dump();
    fail(key, nlohmann::json(v).dump() + " is out of range: must be " + range);
  }
  return v;
}

std::string RewardConfig::choice(const std::string& key, const std::string& fallback,
                                 const std::set<std::string>& choices) const {
  std::string v = text(key, fallback);
  if (!choices.count(v)) fail(key, "'" + v + "' is not one of " + joined(choices));
  return v;
}

}  // namespace rlwb::rewards
