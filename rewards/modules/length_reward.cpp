#include "rewards/modules/length_reward.h"

#include "rewards/modules/reward_config.h"
#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <algorithm>
#include <limits>

namespace rlwb::rewards {
namespace {

struct LengthSettings {
  bool chars = false;
  double target = 0, penalty = 0, below_penalty = 0;
  double max_penalty = std::numeric_limits<double>::infinity();
};

// Code points of UTF-8 text (continuation bytes 10xxxxxx are not counted).
int64_t utf8_length(const std::string& text) {
  return std::count_if(text.begin(), text.end(),
                       [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; });
}

class LengthReward : public core::RewardModule {
 public:
  LengthReward(std::string name, LengthSettings settings) : name_(std::move(name)), s_(settings) {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "length");
    const std::string module = "length reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    std::vector<int64_t> lengths;
    if (s_.chars) {
      if (!input.has("response_text"))
        throw std::runtime_error("reward node '" + ctx.node + "' (" + module +
                                 "): unit chars reads the response " +
                                 "text: give the node in: [response_text, response_mask]");
      for (const auto& text : text_port(input, ctx, "response_text", module))
        lengths.push_back(utf8_length(text));
    } else {
      auto per_row = mask.to(torch::kInt64).sum(1).contiguous();
      lengths.assign(per_row.data_ptr<int64_t>(), per_row.data_ptr<int64_t>() + per_row.numel());
    }
    std::vector<double> scores;
    std::vector<nlohmann::json> details;
    for (int64_t len : lengths) {
      double over = std::max(0.0, static_cast<double>(len) - s_.target);
      double under = std::max(0.0, s_.target - static_cast<double>(len));
      double penalty = std::min(s_.max_penalty, s_.penalty * over + s_.below_penalty * under);
      scores.push_back(-penalty);
      details.push_back({{"length", len}, {"penalty", penalty}});
    }
    return score_output(scores, std::move(details), mask, ctx);
  }

 private:
  std::string name_;
  LengthSettings s_;
};

}  // namespace

core::RewardType length_reward_type() {
  core::RewardType type;
  type.description =
      "length: a penalty for responses longer (or shorter) than a target, in tokens or characters";
  type.methods = score_method({}, /*text_required=*/false);
  type.create = [](const core::RewardSpec& spec, const core::Experiment&, const core::RewardTypes&) {
    RewardConfig config(spec, {"unit", "target", "penalty", "max_length", "max_penalty", "below_penalty"});
    LengthSettings s;
    s.chars = config.choice("unit", "tokens", {"tokens", "chars"}) == "chars";
    s.target = config.number_in("target", 0, 0);
    s.below_penalty = config.number_in("below_penalty", 0, 0);
    if (config.has("penalty") && config.has("max_length"))
      config.fail("max_length",
                  "give either penalty (per unit over the target) or max_length (where the penalty "
                  "reaches max_penalty), not both");
    if (config.has("max_length")) {
      double max_length = config.number_in("max_length", 0, 0);
      if (max_length <= s.target)
        config.fail("max_length", nlohmann::json(max_length).dump() + " must be greater than target (" +
                                      nlohmann::json(s.target).dump() + ")");
      s.max_penalty = config.number_in("max_penalty", 1, 0);
      s.penalty = s.max_penalty / (max_length - s.target);
    } else {
      s.penalty = config.number_in("penalty", 0, 0);
      if (config.has("max_penalty")) s.max_penalty = config.number_in("max_penalty", 0, 0);
    }
    if (s.penalty == 0 && s.below_penalty == 0)
      config.fail("penalty",
                  "is missing or 0, so every score would be 0; give penalty (e.g. 0.01 per unit over "
                  "target) or max_length (and max_penalty)");
    return std::unique_ptr<core::RewardModule>(std::make_unique<LengthReward>(spec.name, s));
  };
  // Building one has no side effects (no process, no file): the check builds one and drops it.
  type.check = [create = type.create](const core::RewardSpec& spec, const core::Experiment& exp) {
    create(spec, exp, {});
  };
  return type;
}

}  // namespace rlwb::rewards
