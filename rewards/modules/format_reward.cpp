#include "rewards/modules/format_reward.h"

#include "rewards/modules/reward_config.h"
#include "rewards/modules/score_columns.h"

#include <regex>

namespace rlwb::rewards {
namespace {

struct FormatSettings {
  std::regex pattern;
  bool full = false;
  double on_match = 1, on_miss = 0;
};

class FormatReward : public core::RewardModule {
 public:
  FormatReward(std::string name, FormatSettings settings) : name_(std::move(name)), s_(std::move(settings)) {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "format");
    const std::string module = "format reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    auto responses = text_port(input, ctx, "response_text", module);
    std::vector<double> scores;
    std::vector<nlohmann::json> details;
    for (const auto& text : responses) {
      nlohmann::json d;
      bool matched = false;
      try {
        matched = s_.full ? std::regex_match(text, s_.pattern) : std::regex_search(text, s_.pattern);
      } catch (const std::regex_error& e) {
        // The matcher gave up on this text (too complex): a miss, and said so.
        d["error"] = std::string("regex could not be evaluated: ") + e.what();
      }
      d["matched"] = matched;
      scores.push_back(matched ? s_.on_match : s_.on_miss);
      details.push_back(std::move(d));
    }
    return score_output(scores, std::move(details), mask, ctx);
  }

 private:
  std::string name_;
  FormatSettings s_;
};

}  // namespace

core::RewardType format_reward_type() {
  core::RewardType type;
  type.description =
      "format: a regular expression over the response; one score on a match, another on a miss";
  type.methods = score_method({});
  type.create = [](const core::RewardSpec& spec, const core::Experiment&, const core::RewardTypes&) {
    RewardConfig config(spec, {"pattern", "match", "ignore_case", "on_match", "on_miss"});
    if (!config.has("pattern"))
      config.fail("pattern",
                  "is missing; give the regular expression the response must match, e.g. "
                  "pattern: 'Answer: -?[0-9]+'");
    FormatSettings s;
    std::string pattern = config.text("pattern", "");
    // The polynomial (non-backtracking) matcher: libstdc++'s default one
    // recurses once per character and overflows the stack on long responses.
    auto flags = std::regex::ECMAScript | std::regex_constants::__polynomial;
    if (config.flag("ignore_case", false)) flags |= std::regex::icase;
    try {
      s.pattern = std::regex(pattern, flags);
    } catch (const std::regex_error& e) {
      config.fail("pattern", "'" + pattern + "' is not a valid regular expression (ECMAScript, no " +
                                 "backreferences): " + e.what());
    }
    s.full = config.choice("match", "search", {"search", "full"}) == "full";
    s.on_match = config.number("on_match", 1.0);
    s.on_miss = config.number("on_miss", 0.0);
    return std::unique_ptr<core::RewardModule>(std::make_unique<FormatReward>(spec.name, std::move(s)));
  };
  // Building one has no side effects (no process, no file): the check builds one and drops it.
  type.check = [create = type.create](const core::RewardSpec& spec, const core::Experiment& exp) {
    create(spec, exp, {});
  };
  return type;
}

}  // namespace rlwb::rewards
