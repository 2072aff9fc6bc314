// Test support for reward modules: hand-made batches (response text, other
// object columns, a response mask of given lengths), modules built through
// the real type registry from a config as a graph file would give it, and
// a call, through the runner's port renaming (core/controller/node_ports.h),
// that returns the scores, details and metrics.
#pragma once

#include "core/controller/node_ports.h"
#include "rewards/modules/reward_types.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

namespace rlwb::rewards::testing {

using nlohmann::json;

// A mask [rows, width] with lengths[i] ones at the start of row i.
inline torch::Tensor mask_of(const std::vector<int64_t>& lengths, int64_t width) {
  auto mask = torch::zeros({static_cast<int64_t>(lengths.size()), width}, torch::kInt64);
  for (size_t i = 0; i < lengths.size(); ++i) mask[static_cast<int64_t>(i)].narrow(0, 0, lengths[i]).fill_(1);
  return mask;
}

// Columns "response_text", "response_mask" (one token per character,
// width = longest + 2), plus the given object columns.
inline core::Batch batch_of(const std::vector<std::string>& responses,
                            const std::vector<std::pair<std::string, std::vector<json>>>& objects = {}) {
  core::Batch b;
  std::vector<json> texts(responses.begin(), responses.end());
  std::vector<int64_t> lengths;
  int64_t width = 0;
  for (const auto& r : responses) {
    lengths.push_back(static_cast<int64_t>(r.size()));
    width = std::max<int64_t>(width, static_cast<int64_t>(r.size()));
  }
  b.set_objects("response_text", texts);
  b.set_tensor("response_mask", mask_of(lengths, width + 2));
  for (const auto& [name, values] : objects) b.set_objects(name, values);
  return b;
}

inline core::RewardSpec spec_of(const std::string& name, const std::string& type, json config) {
  return core::RewardSpec{name, type, std::move(config)};
}

inline std::unique_ptr<core::RewardModule> make_reward(const std::string& type, json config,
                                                       const core::Experiment& exp = {}) {
  return builtin_reward_types().at(type).create(spec_of("r", type, std::move(config)), exp,
                                                builtin_reward_types());
}

// An experiment whose only section is `rewards` ({name: {type, config}}):
// enough for the types that combine other rewards of the file.
inline core::Experiment experiment_of_rewards(const json& rewards) {
  core::Experiment exp;
  for (const auto& [name, r] : rewards.items())
    exp.rewards[name] = core::RewardSpec{name, r.at("type"), r.value("config", json::object())};
  return exp;
}

// The module of reward `name` of `exp`, built through the registry.
inline std::unique_ptr<core::RewardModule> build_reward(const core::Experiment& exp,
                                                        const std::string& name) {
  const core::RewardSpec& spec = exp.rewards.at(name);
  return builtin_reward_types().at(spec.type).create(spec, exp, builtin_reward_types());
}

struct Scored {
  torch::Tensor tokens;        // [rows, width] as returned
  std::vector<double> scores;  // per row: the sum over tokens
  std::vector<json> details;
  json metrics;
};

// Calls `score` as a node with `in` columns and `out` columns would: in the
// list form each column is bound to the port of its name; `in_ports` /
// `out_ports` (same length) bind them to other ports, as the map form does.
inline Scored score(core::RewardModule& module, const core::Batch& batch, const std::vector<std::string>& in,
                    std::vector<std::string> out = {"token_level_scores", "reward_details"},
                    const std::string& node = "rw", std::vector<std::string> in_ports = {},
                    std::vector<std::string> out_ports = {}) {
  core::NodeSpec spec;
  spec.id = node;
  spec.call = "r.score";
  spec.in = in;
  spec.out = out;
  spec.in_ports = std::move(in_ports);
  spec.out_ports = std::move(out_ports);
  const core::WantedPorts wanted(core::wanted_out_ports(spec));
  core::RewardCallContext ctx{3, node, wanted};
  core::Batch reply = module.call("score", core::port_inputs(spec, batch), ctx);
  core::Batch result = core::column_outputs(spec, reply);
  Scored s;
  s.tokens = result.tensor(out[0]);
  auto rows = s.tokens.to(torch::kFloat64).sum(1);
  for (int64_t i = 0; i < rows.size(0); ++i) s.scores.push_back(rows[i].item<double>());
  if (out.size() > 1) s.details = result.objects(out[1]);
  s.metrics = reply.meta().value("metrics", json::object());
  return s;
}

// Expects `fn` to throw an exception whose message contains every part.
inline void expect_error(const std::function<void()>& fn, const std::vector<std::string>& parts) {
  try {
    fn();
    ADD_FAILURE() << "no exception; expected one mentioning '" << parts.at(0) << "'";
  } catch (const std::exception& e) {
    std::string what = e.what();
    for (const auto& part : parts)
      EXPECT_NE(what.find(part), std::string::npos) << "'" << part << "' not in: " << what;
  }
}

}  // namespace rlwb::rewards::testing
