#include "rewards/modules/weighted_sum_reward.h"

#include "rewards/modules/composed_rewards.h"
#include "rewards/modules/reward_config.h"
#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <algorithm>
#include <future>

namespace rlwb::rewards {
namespace {

struct Term {
  std::string name;
  double weight = 1;
  std::unique_ptr<core::RewardModule> module;
};

class WeightedSumReward : public core::RewardModule {
 public:
  WeightedSumReward(std::string name, std::vector<Term> terms)
      : name_(std::move(name)), terms_(std::move(terms)) {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "weighted_sum");
    const std::string module = "weighted_sum reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    // Every term reads the node's input ports it needs by name; its metrics
    // go under reward/<node>/<term>/ through the node name it is given.
    const core::WantedPorts both({"token_level_scores", "reward_details"});
    std::vector<std::string> term_nodes;
    for (const auto& term : terms_) term_nodes.push_back(ctx.node + "/" + term.name);
    std::vector<std::future<core::Batch>> running;
    for (size_t t = 0; t < terms_.size(); ++t)
      running.push_back(std::async(std::launch::async, [&, t] {
        core::RewardCallContext term_ctx{ctx.step, term_nodes[t], both};
        return terms_[t].module->call("score", input, term_ctx);
      }));

    const int64_t rows = mask.size(0);
    auto total = torch::zeros({rows, mask.size(1)}, torch::kFloat32);
    std::vector<nlohmann::json> details(rows, nlohmann::json::object());
    nlohmann::json metrics = nlohmann::json::object();
    std::string failure;
    for (size_t t = 0; t < terms_.size(); ++t) {
      core::Batch out;
      try {
        out = running[t].get();  // every term is waited for, even after one failed
      } catch (const std::exception& e) {
        if (failure.empty()) failure = "term '" + terms_[t].name + "': " + e.what();
        continue;
      }
      const auto& scores = out.tensor("token_level_scores");
      if (scores.sizes() != total.sizes())
        throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): term '" + terms_[t].name +
                                 "' returned scores of another shape than the response mask");
      total += terms_[t].weight * scores.to(torch::kFloat32);
      auto row_scores = scores.to(torch::kFloat64).sum(1).contiguous();
      const auto* row_score = row_scores.data_ptr<double>();
      const auto& term_details = out.objects("reward_details");
      for (int64_t i = 0; i < rows; ++i) {
        nlohmann::json d =
            term_details[i].is_object() ? term_details[i] : nlohmann::json{{"value", term_details[i]}};
        d["score"] = row_score[i];
        details[i][terms_[t].name] = std::move(d);
      }
      if (out.meta().contains("metrics")) metrics.update(out.meta()["metrics"]);
    }
    if (!failure.empty())
      throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): " + failure);

    auto row_totals = total.to(torch::kFloat64).sum(1).contiguous();
    std::vector<double> scores(row_totals.data_ptr<double>(), row_totals.data_ptr<double>() + rows);
    core::Batch out = score_output(scores, std::move(details), mask, ctx);
    out.meta()["metrics"].update(metrics);
    return out;
  }

 private:
  std::string name_;
  std::vector<Term> terms_;
};

// The terms of a weighted_sum reward, checked; with `types`, each term's
// module is created too (without, only the settings are checked).
std::vector<Term> parse_terms(const core::RewardSpec& spec, const core::Experiment& exp,
                              const core::RewardTypes* types) {
  RewardConfig config(spec, {"terms"});
  if (!config.has("terms") || !config.raw("terms").is_object() || config.raw("terms").empty())
    config.fail("terms",
                "must be a map {reward_name: weight, ...} naming at least one other reward of this file");
  check_no_cycle(spec, exp, "terms");
  std::vector<Term> terms;
  for (const auto& [name, value] : config.raw("terms").items()) {
    const std::string where = config.where("terms") + "." + name;
    Term term;
    term.name = name;
    if (value.is_number()) {
      term.weight = value.get<double>();
    } else if (value.is_object()) {
      for (const auto& [key, v] : value.items())
        if (key == "in")
          throw std::runtime_error(where + ".in: a term reads the node's input ports by name " +
                                   "(response_text, ground_truth, tests, response_mask); bind the " +
                                   "node's ports instead (docs/rewards.md)");
        else if (key != "weight")
          throw std::runtime_error(where + ": unknown key '" + key + "'; a term is a weight or {weight}");
      if (!value.contains("weight") || !value["weight"].is_number())
        throw std::runtime_error(where + ".weight: must be a number");
      term.weight = value["weight"].get<double>();
    } else {
      throw std::runtime_error(where + ": must be a weight (number) or {weight: w}, got " + value.dump());
    }
    term.module = named_module(where, name, spec, exp, types);
    terms.push_back(std::move(term));
  }
  return terms;
}

}  // namespace

core::RewardType weighted_sum_reward_type(const core::RewardTypes& term_types) {
  core::RewardType type;
  type.description =
      "weighted_sum: the weighted sum of other rewards of the graph, with their details merged";
  // What any term may read: every input port of the other types, optional
  // here (a term that needs one says so when it runs); the mask is required.
  type.methods = score_method(ports_any_may_read(term_types, "term"), /*text_required=*/false);
  type.create = [](const core::RewardSpec& spec, const core::Experiment& exp,
                   const core::RewardTypes& types) {
    return std::unique_ptr<core::RewardModule>(
        std::make_unique<WeightedSumReward>(spec.name, parse_terms(spec, exp, &types)));
  };
  type.check = [](const core::RewardSpec& spec, const core::Experiment& exp) {
    parse_terms(spec, exp, nullptr);
  };
  return type;
}

}  // namespace rlwb::rewards
