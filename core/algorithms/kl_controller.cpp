#include "core/algorithms/kl_controller.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "core/algorithms/input_checks.h"

namespace rlwb::core::algorithms {

KlControlType parse_kl_control_type(std::string_view name) {
  for (const auto& [known, type] : kl_control_names())
    if (known == name) return type;
  detail::fail("parse_kl_control_type",
               "unknown KL controller '" + std::string(name) + "'; use fixed or adaptive");
}

KlController::KlController(const KlControlOptions& options) : options_(options), beta_(options.kl_coef) {
  constexpr const char* fn = "KlController";
  if (!(options.kl_coef >= 0) || !std::isfinite(options.kl_coef)) {
    detail::fail(fn, "kl_coef must be a finite number >= 0, got " + std::to_string(options.kl_coef));
  }
  if (options.type == KlControlType::kAdaptive && (!(options.target_kl > 0) || !(options.horizon > 0))) {
    detail::fail(fn, "the adaptive controller needs target_kl > 0 and horizon > 0, got target_kl=" +
                         std::to_string(options.target_kl) + " horizon=" + std::to_string(options.horizon));
  }
}

void KlController::update(double current_kl, int64_t n_steps) {
  if (n_steps < 0) {
    detail::fail("KlController::update", "n_steps must be >= 0, got " + std::to_string(n_steps));
  }
  if (!std::isfinite(current_kl)) {
    detail::fail("KlController::update", "current_kl is not finite (" + std::to_string(current_kl) +
                                             "); check the log-probs of the actor and the reference");
  }
  if (options_.type == KlControlType::kFixed) return;
  double error = std::clamp(current_kl / options_.target_kl - 1.0, -0.2, 0.2);
  beta_ *= 1.0 + error * static_cast<double>(n_steps) / options_.horizon;
}

}  // namespace rlwb::core::algorithms
