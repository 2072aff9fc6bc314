// Internal to core/graph: names in messages: lists ("a, b, c"), "did you
// mean" matching and what a value is ("a map", "text 'x'"), used by the
// loader, the override resolver and the validator's hints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace rlwb::core::graph_detail {

// "a, b, c"; "(none)" when empty.
std::string list_names(const std::vector<std::string>& names);

// Candidates close to `name` (small edit distance, or one contains the
// other, ignoring case), closest first. Never `name` itself.
std::vector<std::string> similar_names(const std::string& name, const std::vector<std::string>& candidates);

// " did you mean 'x'?" for the closest candidate, or "" when none is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

// A value as a message names it: "a map", "a list", "empty", "text 'x'",
// else the value itself ("5", "true").
std::string describe_value(const nlohmann::json& value);

}  // namespace rlwb::core::graph_detail
