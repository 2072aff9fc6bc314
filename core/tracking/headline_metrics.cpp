// headline_first (headline_metrics.h): a stable move to the front.
#include "core/tracking/headline_metrics.h"

#include <algorithm>
#include <string_view>

#include "core/tracking/tracking.h"

namespace rlwb::core {

// The runs table's score is the reward headline: one name for both.
static_assert(std::string_view(kRewardMetric) == kRunScoreMetric);

std::vector<std::string> headline_first(const std::vector<std::string>& keys) {
  const auto has = [&](const char* key) { return std::find(keys.begin(), keys.end(), key) != keys.end(); };
  std::vector<std::string> headlines;
  for (const char* key : {kHeldOutScoreMetric, kRewardMetric})
    if (has(key)) headlines.emplace_back(key);
  const auto kl = std::find_if(std::begin(kKlMetrics), std::end(kKlMetrics), has);
  if (kl != std::end(kKlMetrics)) headlines.emplace_back(*kl);

  std::vector<std::string> out = headlines;
  for (const std::string& key : keys)
    if (std::find(headlines.begin(), headlines.end(), key) == headlines.end()) out.push_back(key);
  return out;
}

}  // namespace rlwb::core
