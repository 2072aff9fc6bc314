#include "rewards/modules/data_source_reward.h"

#include "rewards/modules/composed_rewards.h"
#include "rewards/modules/reward_config.h"
#include "rewards/modules/score_columns.h"

#include <torch/torch.h>

#include <future>
#include <map>

namespace rlwb::rewards {
namespace {

struct Routes {
  std::map<std::string, std::string> reward_of;                        // data_source -> reward name
  std::string fallback;                                                // "" when none
  std::map<std::string, std::unique_ptr<core::RewardModule>> modules;  // by reward name
};

class DataSourceReward : public core::RewardModule {
 public:
  DataSourceReward(std::string name, Routes routes) : name_(std::move(name)), routes_(std::move(routes)) {}

  core::Batch call(const std::string& method, const core::Batch& input,
                   const core::RewardCallContext& ctx) override {
    require_score_method(method, name_, "by_data_source");
    const std::string module = "by_data_source reward '" + name_ + "'";
    auto mask = response_mask_port(input, ctx, module);
    const auto sources = text_port(input, ctx, "data_source", module);
    // The rows of each reward, in the batch's order.
    std::map<std::string, std::vector<int64_t>> rows_of;
    for (size_t i = 0; i < sources.size(); ++i) rows_of[reward_for(sources[i], i, ctx)].push_back(int64_t(i));

    const core::WantedPorts both({"token_level_scores", "reward_details"});
    std::map<std::string, std::future<core::Batch>> running;
    for (const auto& [reward, rows] : rows_of)
      running[reward] = std::async(std::launch::async, [&, reward = reward] {
        core::RewardCallContext route_ctx{ctx.step, ctx.node + "/" + reward, both};
        return routes_.modules.at(reward)->call("score", input.reorder(rows_of.at(reward)), route_ctx);
      });

    const int64_t total_rows = mask.size(0);
    std::vector<double> scores(static_cast<size_t>(total_rows), 0.0);
    std::vector<nlohmann::json> details(static_cast<size_t>(total_rows), nlohmann::json::object());
    nlohmann::json metrics = nlohmann::json::object();
    std::string failure;
    for (auto& [reward, result] : running) {
      core::Batch out;
      try {
        out = result.get();  // every route is waited for, even after one failed
      } catch (const std::exception& e) {
        if (failure.empty()) failure = "route to '" + reward + "': " + e.what();
        continue;
      }
      const auto& rows = rows_of.at(reward);
      auto row_scores = out.tensor("token_level_scores").to(torch::kFloat64).sum(1).contiguous();
      const auto& route_details = out.objects("reward_details");
      for (size_t k = 0; k < rows.size(); ++k) {
        const auto i = static_cast<size_t>(rows[k]);
        scores[i] = row_scores[int64_t(k)].item<double>();
        nlohmann::json d =
            route_details[k].is_object() ? route_details[k] : nlohmann::json{{"value", route_details[k]}};
        d["data_source"] = sources[i];
        d["reward"] = reward;
        details[i] = std::move(d);
      }
      if (out.meta().contains("metrics")) metrics.update(out.meta()["metrics"]);
    }
    if (!failure.empty())
      throw std::runtime_error("reward node '" + ctx.node + "' (" + module + "): " + failure);
    core::Batch out = score_output(scores, std::move(details), mask, ctx);
    out.meta()["metrics"].update(metrics);
    return out;
  }

 private:
  const std::string& reward_for(const std::string& source, size_t row,
                                const core::RewardCallContext& ctx) const {
    auto it = routes_.reward_of.find(source);
    if (it != routes_.reward_of.end()) return it->second;
    if (!routes_.fallback.empty()) return routes_.fallback;
    std::string known;
    for (const auto& [s, r] : routes_.reward_of) known += (known.empty() ? "" : ", ") + s;
    throw std::runtime_error("reward node '" + ctx.node + "' (by_data_source reward '" + name_ + "'): row " +
                             std::to_string(row) + " has data_source '" + source +
                             "', which no route names (" + known + "); add it to rewards." + name_ +
                             ".config.routes or set default");
  }

  std::string name_;
  Routes routes_;
};

// The routes of a by_data_source reward, checked; with `types`, each named
// reward's module is built too.
Routes parse_routes(const core::RewardSpec& spec, const core::Experiment& exp,
                    const core::RewardTypes* types) {
  RewardConfig config(spec, {"routes", "default"});
  if (!config.has("routes") || !config.raw("routes").is_object() || config.raw("routes").empty())
    config.fail("routes", "must be a map {data_source: reward_name, ...} naming at least one other reward");
  check_no_cycle(spec, exp, "routes");
  Routes routes;
  auto add = [&](const std::string& where, const nlohmann::json& value) -> std::string {
    if (!value.is_string() || value.get<std::string>().empty())
      throw std::runtime_error(where + ": must be the name of another reward of this file, got " +
                               value.dump());
    const std::string reward = value.get<std::string>();
    if (!routes.modules.count(reward)) routes.modules[reward] = named_module(where, reward, spec, exp, types);
    return reward;
  };
  for (const auto& [source, value] : config.raw("routes").items())
    routes.reward_of[source] = add(config.where("routes") + "." + source, value);
  if (config.has("default")) routes.fallback = add(config.where("default"), config.raw("default"));
  return routes;
}

}  // namespace

core::RewardType data_source_reward_type(const core::RewardTypes& route_types) {
  core::RewardType type;
  type.description = "by_data_source: each row scored by the reward its data_source column names";
  std::vector<core::PortSpec> reads = {core::required_port("data_source", "which route scores the row")};
  for (auto& port : ports_any_may_read(route_types, "route"))
    if (port.name != "data_source") reads.push_back(std::move(port));
  type.methods = score_method(std::move(reads), /*text_required=*/false);
  type.create = [](const core::RewardSpec& spec, const core::Experiment& exp,
                   const core::RewardTypes& types) {
    return std::unique_ptr<core::RewardModule>(
        std::make_unique<DataSourceReward>(spec.name, parse_routes(spec, exp, &types)));
  };
  type.check = [](const core::RewardSpec& spec, const core::Experiment& exp) {
    parse_routes(spec, exp, nullptr);
  };
  return type;
}

}  // namespace rlwb::rewards
