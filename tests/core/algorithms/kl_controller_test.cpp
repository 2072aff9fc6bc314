// Fixed and adaptive KL controllers (Ziegler et al. 2019).
#include "core/algorithms/kl_controller.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/algorithms/algorithm_error.h"

namespace rlwb::core::algorithms {
namespace {

const KlControlOptions kAdaptive{
    .type = KlControlType::kAdaptive, .kl_coef = 0.2, .target_kl = 6, .horizon = 10000};

TEST(KlController, FixedNeverChanges) {
  KlController c({.type = KlControlType::kFixed, .kl_coef = 0.05});
  c.update(100.0, 1000);
  c.update(0.0, 1000);
  EXPECT_EQ(c.value(), 0.05);
}

TEST(KlController, AdaptiveMatchesHandComputedSteps) {
  KlController c(kAdaptive);
  EXPECT_EQ(c.value(), 0.2);
  // KL 8 over target 6: error 1/3 clipped to 0.2; beta *= 1 + 0.2 * 256 / 10000.
  c.update(8.0, 256);
  EXPECT_NEAR(c.value(), 0.201024, 1e-12);
  // KL 5.4: error -0.1; beta *= 1 - 0.1 * 0.0256.
  c.update(5.4, 256);
  EXPECT_NEAR(c.value(), 0.200509379, 1e-9);
}

TEST(KlController, AdaptiveHoldsAtTargetAndMovesTowardIt) {
  KlController at_target(kAdaptive);
  at_target.update(6.0, 5000);
  EXPECT_NEAR(at_target.value(), 0.2, 1e-12);

  KlController above(kAdaptive), below(kAdaptive);
  for (int i = 0; i < 10; ++i) {
    above.update(60.0, 1000);
    below.update(0.0, 1000);
  }
  // Error clipped at +-0.2: 1.02^10 and 0.98^10.
  EXPECT_NEAR(above.value(), 0.2 * std::pow(1.02, 10), 1e-9);
  EXPECT_NEAR(below.value(), 0.2 * std::pow(0.98, 10), 1e-9);
}

TEST(KlController, ZeroStepsChangeNothing) {
  KlController c(kAdaptive);
  c.update(60.0, 0);
  EXPECT_EQ(c.value(), 0.2);
}

TEST(KlController, ParsesTypeNames) {
  EXPECT_EQ(parse_kl_control_type("fixed"), KlControlType::kFixed);
  EXPECT_EQ(parse_kl_control_type("adaptive"), KlControlType::kAdaptive);
  EXPECT_THROW(parse_kl_control_type("Adaptive"), AlgorithmError);
}

TEST(KlController, RejectsBadOptionsAndMeasurements) {
  EXPECT_THROW(KlController({.kl_coef = -1}), AlgorithmError);
  EXPECT_THROW(KlController({.type = KlControlType::kAdaptive, .target_kl = 0}), AlgorithmError);
  EXPECT_THROW(KlController({.type = KlControlType::kAdaptive, .horizon = 0}), AlgorithmError);
  KlController c(kAdaptive);
  EXPECT_THROW(c.update(std::numeric_limits<double>::quiet_NaN(), 10), AlgorithmError);
  EXPECT_THROW(c.update(1.0, -1), AlgorithmError);
  EXPECT_EQ(c.value(), 0.2);
}

}  // namespace
}  // namespace rlwb::core::algorithms
