// The headline metrics of a run: the held-out score, the reward and the KL
// to the reference, in that order. Wherever metrics are listed -- the
// dashboard and the compare view (ui/runs), `rlwb runs show` and
// `rlwb runs compare` -- they come first, so the numbers a user looks for
// are at the top; every other metric keeps the order it had.
#pragma once

#include <string>
#include <vector>

namespace rlwb::core {

// The held-out score (trainer.eval) and the training reward (kRunScoreMetric).
inline constexpr const char* kHeldOutScoreMetric = "val/score/mean";
inline constexpr const char* kRewardMetric = "critic/score/mean";
// The KL to the reference, in order of preference: the KL loss term, else
// the KL penalty inside the reward, else the PPO step's KL to the old policy.
inline constexpr const char* kKlMetrics[] = {"actor/kl_loss", "actor/reward_kl_penalty", "actor/ppo_kl"};

// `keys` with the headline metrics moved to the front: the held-out score,
// the reward, then the first of kKlMetrics that `keys` holds (a second KL
// key stays where it was). Headline keys that `keys` lacks are not added.
std::vector<std::string> headline_first(const std::vector<std::string>& keys);

}  // namespace rlwb::core
