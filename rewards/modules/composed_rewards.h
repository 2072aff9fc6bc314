// What the reward types that combine other rewards of the graph file
// (weighted_sum's terms, by_data_source's routes) share:
//   - which rewards a spec names, so that a chain of them that leads back to
//     where it started is refused (it would build forever);
//   - the module of a named reward, built through the reward types, with
//     an error naming the setting when there is no such reward;
//   - the input ports any of the named rewards may read.
#pragma once

#include "core/controller/reward_module.h"

#include <memory>
#include <string>
#include <vector>

namespace rlwb::rewards {

// The rewards `spec` names: a weighted_sum's terms, a by_data_source's
// routes and default; none for any other type (or a malformed config,
// which the type's own check reports).
std::vector<std::string> named_rewards(const core::RewardSpec& spec);

// Throws when the rewards `spec` names lead back to `spec`, naming the chain.
void check_no_cycle(const core::RewardSpec& spec, const core::Experiment& exp, const std::string& setting);

// The module of reward `name` of `exp`, which setting `where` names. Throws
// when the file has no such reward (listing those it has). With `types`
// null only that check is made and the result is null.
std::unique_ptr<core::RewardModule> named_module(const std::string& where, const std::string& name,
                                                 const core::RewardSpec& spec, const core::Experiment& exp,
                                                 const core::RewardTypes* types);

// The input ports of every type in `types` other than response_text and
// response_mask, each optional: what a combined reward may hand on.
std::vector<core::PortSpec> ports_any_may_read(const core::RewardTypes& types, const std::string& purpose);

}  // namespace rlwb::rewards
