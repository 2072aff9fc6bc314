// Everything in core/algorithms in one include: the RL math shared by the
// controller (advantages, KL in the reward, KL and Lagrange controllers)
// and the workers (policy, value, KL and entropy losses). Each header
// documents its functions with their formulas; docs/algorithms.md lists
// them all.
#pragma once

#include "core/algorithms/advantage_estimator.h"
#include "core/algorithms/advantage_result.h"
#include "core/algorithms/algorithm_error.h"
#include "core/algorithms/discounted_returns.h"
#include "core/algorithms/entropy.h"
#include "core/algorithms/gae.h"
#include "core/algorithms/group_advantages.h"
#include "core/algorithms/kl.h"
#include "core/algorithms/kl_controller.h"
#include "core/algorithms/loss_aggregation.h"
#include "core/algorithms/masked_ops.h"
#include "core/algorithms/policy_loss.h"
#include "core/algorithms/safe_rlhf.h"
#include "core/algorithms/value_loss.h"
