// The controller-side RL nodes (builtin.<name>), added by add_rl_builtins
// with the ports below (the *_ports() functions):
//
//   compute_advantage  in ports:
//                        token_level_scores [B,R]  (required) reward-module or RM scores
//                        response_mask [B,R]       (required)
//                        old_log_probs, ref_log_probs  (KL in the reward)
//                        values [B,R]              (gae)
//                        group_index [B]           (grpo, dr_grpo, rloo, reinforce_plus_plus_baseline)
//                        baseline_scores [B,R] or [B]  (remax: the greedy response's score)
//                      out ports: advantages, returns
//                      args: {metrics_prefix: critic} (a second advantage node logs under its own)
//     trainer.algorithm: {adv_estimator: grpo, gamma: 1.0, lam: 1.0,
//       use_kl_in_reward: false, kl_penalty: kl, kl_ctrl: {type: fixed|adaptive,
//       kl_coef: 0.001, target_kl: 0.1, horizon: 10000}}
//     Metrics under verl's names: critic/score/*, critic/rewards/*,
//     critic/advantages/*, critic/returns/*, critic/values/mean,
//     response_length/mean|max|min|clip_ratio, actor/reward_kl_penalty(_coeff).
//
//   safe_rlhf_advantage  in ports: reward_advantages, cost_advantages, cost_scores, response_mask
//                        (all required); out port: advantages
//     trainer.algorithm.safe_rlhf: {cost_threshold, lambda_init, lambda_lr, lambda_max,
//     lambda_kp, lambda_step}
//     Updates the Lagrange multiplier from the batch's mean episode cost
//     each step (state kept across steps) and mixes the two advantages
//     with the multiplier before the update plus lambda_kp times this
//     step's violation (safe_rlhf/lambda_applied).
//
//   preference_pairs   in ports: response_text (text), scores [B,R] or [B] (an
//                        annotator's verdict: the math checker standing in for human
//                        labellers), group_index [B] (all required); model_scores [B,R]
//                        or [B] (the reward model's scores of the same responses)
//                      out ports: chosen, rejected (text), pair_weight [B],
//                        chosen_sign, rejected_sign [B] (+1 where the annotator's score
//                        is above args.sign_threshold, default 0.5, else -1)
//     Online preference pairs from the policy's own samples, as iterated
//     RLHF collects them: row k of a prompt's group is compared with row
//     k+1 (cyclically; a group of two makes one pair), the better-scored
//     response chosen; pair_weight is 1 where the two differ, 0 for ties
//     (no preference to learn; the signs still say which responses are
//     good, so a group the policy gets all wrong still teaches). Metrics pairs/{labelled, per_prompt}; with
//     model_scores, pairs/model_accuracy: the share of this step's pairs
//     the reward model ranked right before learning from them (it falls
//     when the policy finds the model's blind spots).
#pragma once

#include "core/controller/builtins.h"

namespace rlwb::core {

Batch compute_advantage(const Batch& input, BuiltinContext& ctx);
Batch safe_rlhf_advantage(const Batch& input, BuiltinContext& ctx);
Batch preference_pairs(const Batch& input, BuiltinContext& ctx);
Batch rollout_mismatch(const Batch& input, BuiltinContext& ctx);
CallPorts compute_advantage_ports();
CallPorts safe_rlhf_advantage_ports();
CallPorts preference_pairs_ports();
CallPorts rollout_mismatch_ports();

// compute_advantage, safe_rlhf_advantage, preference_pairs and rollout_mismatch.
void add_rl_builtins(Builtins& builtins);

}  // namespace rlwb::core
