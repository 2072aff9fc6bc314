// The KL coefficient beta and how it changes between steps: fixed, or
// adaptive (Ziegler et al. 2019, "Fine-Tuning Language Models from Human
// Preferences"). Owned by the controller, which feeds it the KL measured
// each step (KlInReward::current_kl) and passes value() to
// apply_kl_in_reward or kl_loss (kl.h).
//
// adaptive:  e    = clamp(current_kl / target_kl - 1, -0.2, 0.2)
//            beta = beta * (1 + e * n_steps / horizon)
// so beta grows while the KL is above target and shrinks while below, by
// at most 20% per `horizon` samples. fixed: beta never changes.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/config/algorithm_names.h"

namespace rlwb::core::algorithms {

// "fixed" or "adaptive"; throws AlgorithmError otherwise.
KlControlType parse_kl_control_type(std::string_view name);

struct KlControlOptions {
  KlControlType type = KlControlType::kFixed;
  double kl_coef = 0.001;  // initial beta, >= 0
  double target_kl = 0.1;  // adaptive: the KL to steer to, > 0
  double horizon = 10000;  // adaptive: samples over which e acts fully, > 0
};

class KlController {
 public:
  // Throws AlgorithmError for options out of range.
  explicit KlController(const KlControlOptions& options = {});

  double value() const { return beta_; }

  // After a step: current_kl measured over n_steps samples (verl passes the
  // batch size). A no-op for the fixed controller. n_steps >= 0.
  void update(double current_kl, int64_t n_steps);

 private:
  KlControlOptions options_;
  double beta_;
};

}  // namespace rlwb::core::algorithms
