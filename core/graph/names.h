// Internal to core/graph: names in messages: lists ("a, b, c") and "did you
// mean" matching, used by the override resolver and the validator's hints.
#pragma once

#include <string>
#include <vector>

namespace rlwb::core::graph_detail {

// "a, b, c"; "(none)" when empty.
std::string list_names(const std::vector<std::string>& names);

// Candidates close to `name` (small edit distance, or one contains the
// other, ignoring case), closest first. Never `name` itself.
std::vector<std::string> similar_names(const std::string& name,
                                       const std::vector<std::string>& candidates);

// " did you mean 'x'?" for the closest candidate, or "" when none is close.
std::string did_you_mean(const std::string& name, const std::vector<std::string>& candidates);

}  // namespace rlwb::core::graph_detail
