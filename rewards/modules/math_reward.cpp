// Reward type "math": 1 when the response's final answer equals the ground
// truth (rewards/math/math_check.h), else 0. Config:
//   last_number_fallback (bool, false)  take the last number when nothing is marked
//   percent ("drop_sign" | "fraction" | "either")
//   compat ("default" | "math-verify")   whose conventions (docs/math-checker.md)
// Ports: in response_text, ground_truth, response_mask; out
// token_level_scores, reward_details.
#include "rewards/modules/math_reward.h"

#include "rewards/math/math_check.h"
#include "rewards/modules/reward_config.h"
#include "rewards/modules/score_columns.h"

namespace rlwb::rewards {
namespace {

class MathReward : public core::RewardModule {
 public:
  MathReward(std::string name, MathCheckOptions options) : name_(std::move(name)), options_(options) {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "math");
    const std::string module = "math reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    auto responses = text_port(input, ctx, "response_text", module);
    auto references = text_port(input, ctx, "ground_truth", module);
    auto verdicts = check_math_answers(responses, references, options_);
    std::vector<double> scores;
    std::vector<nlohmann::json> details;
    for (const auto& v : verdicts) {
      scores.push_back(v.score);
      details.push_back(
          {{"extracted", v.extracted}, {"reference", v.reference_answer}, {"reason", v.reason}});
    }
    return score_output(scores, std::move(details), mask, ctx);
  }

 private:
  std::string name_;
  MathCheckOptions options_;
};

}  // namespace

core::RewardType math_reward_type() {
  core::RewardType type;
  type.description = "math answer checker: 1 when the final answer equals the ground truth";
  type.methods = score_method({core::required_port("ground_truth", "the reference answer per row")});
  type.create = [](const core::RewardSpec& spec, const core::Experiment&, const core::RewardTypes&) {
    RewardConfig config(spec, {"last_number_fallback", "percent", "compat"});
    MathCheckOptions options;
    options.last_number_fallback = config.flag("last_number_fallback", false);
    std::string percent = config.choice("percent", "drop_sign", {"drop_sign", "fraction", "either"});
    if (percent == "fraction") options.percent = PercentRule::kFraction;
    if (percent == "either") options.percent = PercentRule::kEither;
    if (config.choice("compat", "default", {"default", "math-verify"}) == "math-verify")
      options.compat = CompatMode::kMathVerify;
    return std::unique_ptr<core::RewardModule>(std::make_unique<MathReward>(spec.name, options));
  };
  // Building one has no side effects (no process, no file): the check builds one and drops it.
  type.check = [create = type.create](const core::RewardSpec& spec, const core::Experiment& exp) {
    create(spec, exp, {});
  };
  return type;
}

}  // namespace rlwb::rewards
