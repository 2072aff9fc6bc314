// Reward type "by_data_source": each row scored by the reward its
// data_source names, as verl picks the scoring function per row of a mixed
// dataset (math rows by the math checker, code rows in the sandbox, ...).
// Config (docs/rewards.md):
//   routes:  {<data_source>: <reward name>, ...}   exact names of the column
//   default: <reward name>     for the rows no route names (else an error)
// Every route's rows go to its module in one call, the modules run at the
// same time, and the scores come back in the batch's row order. Ports: in
// data_source, response_mask and every input port of `route_types`
// (response_text, ground_truth, tests, ...; optional); out
// token_level_scores, reward_details {data_source, reward, ...the route's
// details}. Metrics: reward/<node>/mean and reward/<node>/<reward>/mean
// for each route that scored rows.
#pragma once

#include "core/controller/reward_module.h"

namespace rlwb::rewards {

core::RewardType data_source_reward_type(const core::RewardTypes& route_types);

}  // namespace rlwb::rewards
