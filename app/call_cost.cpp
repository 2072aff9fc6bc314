#include "app/call_cost.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include "app/registries.h"
#include "app/tokenizer_vocab.h"
#include "core/config/experiment_options.h"
#include "core/controller/controller.h"
#include "core/planner/plan_input.h"
#include "core/planner/plan_writer.h"
#include "core/planner/planner.h"

namespace rlwb::app {
namespace {

constexpr int kSteps = 8;  // the first is left out (first-touch allocations, weight reorders)
// A scale outside these says the two runs measured noise, not rows.
constexpr double kMinComputeScale = 0.02;
constexpr double kMaxComputeScale = 50;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0.0 : v[v.size() / 2];
}

// The experiment with every model on one worker, as the one-device plan
// puts them.
core::Experiment on_one_worker(const core::Experiment& exp, const core::planner::PlanInput& input,
                               const core::planner::DeviceProfile& profile) {
  core::planner::PlanOptions options;
  options.devices = 1;
  const core::planner::PlanSearch search = core::planner::search_plans(input, profile, options);
  if (search.plans.empty()) throw std::runtime_error("the experiment has no plan on one device to measure");
  return core::planner::apply_plan(exp, input, search.plans.front(), "cpu");
}

// One worker node's calls in a run: the medians, over the steps after the
// first, of the method's own seconds on the worker (compute_s) and of what
// the controller waited beyond them (timing_s - compute_s: the round trip,
// and the wait behind the worker's other calls when the graph hands it two
// at once, as it does ref and values, or both updates, on one worker).
struct NodeSeconds {
  double compute = 0;
  double beyond = 0;
};

std::map<std::string, NodeSeconds> node_seconds(const core::Experiment& one, int64_t prompts,
                                                const std::string& worker_binary) {
  std::vector<std::string> overrides = {"++trainer.steps=" + std::to_string(kSteps),
                                        "++task.batch_size=" + std::to_string(prompts)};
  for (const char* phase : {"warm_start", "eval", "save"})
    if (one.trainer.contains(phase)) overrides.push_back(std::string("~trainer.") + phase);
  // One optimizer step an epoch at either batch size (0: the whole batch),
  // so that the two runs differ in their rows only.
  for (const auto& [name, model] : one.models)
    if (model.config.contains("ppo") && model.config["ppo"].contains("mini_batch_size"))
      overrides.push_back("models." + name + ".config.ppo.mini_batch_size=0");
  core::Experiment exp = core::load_experiment_text(core::experiment_to_yaml(one), one.file, overrides);
  core::ControllerOptions options = controller_options();
  options.worker_binary = worker_binary;
  options.run_name = "calibration";
  core::Controller controller(exp, options, nullptr);
  const core::RunResult result = controller.run();
  if (result.status != "finished")
    throw std::runtime_error("the calibration run at " + std::to_string(prompts) + " prompts a step " +
                             result.status + ": " + result.error);
  std::map<std::string, NodeSeconds> out;
  for (const auto& node : exp.nodes) {
    if (!exp.models.count(node.target)) continue;  // controller-side nodes: not a worker call
    std::vector<double> compute, beyond;
    for (std::size_t s = 1; s < result.steps.size(); ++s) {
      const auto& m = result.steps[s].metrics;
      auto timing = m.find("timing_s/" + node.id), own = m.find("compute_s/" + node.id);
      if (timing == m.end() || own == m.end()) continue;
      compute.push_back(own->second);
      beyond.push_back(std::max(0.0, timing->second - own->second));
    }
    if (!compute.empty()) out[node.id] = {median(compute), median(beyond)};
  }
  return out;
}

// The cost model's compute (with communication) of each worker node on
// the one-device plan at `prompts` prompts a step, before any scale.
std::map<std::string, double> modelled_seconds(const core::planner::PlanInput& input,
                                               const core::planner::DeviceProfile& profile, int64_t prompts) {
  core::planner::PlanInput at = input;
  at.workload.prompts = prompts;
  core::planner::DeviceProfile unscaled = profile;
  unscaled.compute_scale = {};
  core::planner::PlanOptions options;
  options.devices = 1;
  const core::planner::PlanSearch search = core::planner::search_plans(at, unscaled, options);
  std::map<std::string, double> out;
  if (search.plans.empty()) return out;
  for (const auto& stage : search.plans.front().step.stages)
    if (stage.set >= 0) out[stage.node] = stage.time.compute + stage.time.communication;
  return out;
}

}  // namespace

CallCost measure_call_cost(const core::Experiment& exp, const core::planner::DeviceProfile& profile,
                           const std::string& worker_binary) {
  const core::config::ExperimentOptions options = core::config::parse_experiment_options(exp);
  const core::planner::PlanInput input = core::planner::plan_input_of(exp, tokenizer_vocab);
  const core::Experiment one = on_one_worker(exp, input, profile);
  const int64_t big = std::max<int64_t>(1, options.task.batch_size);
  const int64_t small = std::max<int64_t>(1, big / 4);
  const std::map<std::string, NodeSeconds> at_small = node_seconds(one, small, worker_binary);
  const std::map<std::string, NodeSeconds> at_big = node_seconds(one, big, worker_binary);
  const double rows_small = double(small * options.task.samples_per_prompt),
               rows_big = double(big * options.task.samples_per_prompt);
  const std::map<std::string, double> model_small = modelled_seconds(input, profile, small);
  const std::map<std::string, double> model_big = modelled_seconds(input, profile, big);
  // The round trip of a call: the least any node waited beyond its own
  // seconds (the graph hands some node alone to the worker; the others'
  // waits also hold their turn behind another call, which the planner's
  // simulation already serialises on a device).
  double round_trip = std::numeric_limits<double>::infinity();
  for (const auto* run : {&at_small, &at_big})
    for (const auto& [node, seconds] : *run) round_trip = std::min(round_trip, seconds.beyond);
  if (!std::isfinite(round_trip)) round_trip = 0;
  CallCost cost;
  cost.measured = {{"rows", {rows_small, rows_big}},
                   {"round_trip_seconds", round_trip},
                   {"nodes", nlohmann::json::object()}};
  std::map<std::string, std::vector<double>> fixed_by_stage;
  std::vector<double> all;
  for (const auto& [node, s_small] : at_small) {
    auto it = at_big.find(node);
    if (it == at_big.end()) continue;
    const double c_small = s_small.compute, c_big = it->second.compute;
    // The method's own seconds = fixed + rows * per_row through the two
    // points; the call's fixed cost adds the round trip.
    const double per_row = (c_big - c_small) / (rows_big - rows_small);
    const double fixed = std::max(0.0, c_small - per_row * rows_small) + round_trip;
    std::string kind;
    for (const auto& stage : input.stages)
      if (stage.node == node) kind = core::planner::stage_kind_name(stage.kind);
    cost.measured["nodes"][node] = {{"kind", kind},
                                    {"compute_seconds", {c_small, c_big}},
                                    {"waited_beyond_seconds", {s_small.beyond, it->second.beyond}},
                                    {"fixed_seconds", fixed}};
    // What the rows cost, measured over modelled: the difference of the two
    // batch sizes on both sides, so that neither side's fixed part counts.
    if (model_small.count(node) && model_big.count(node)) {
      const double modelled = model_big.at(node) - model_small.at(node);
      const double measured = c_big - c_small;
      cost.measured["nodes"][node]["modelled_seconds"] = {model_small.at(node), model_big.at(node)};
      if (modelled > 0 && measured > 0) {
        const double scale = std::clamp(measured / modelled, kMinComputeScale, kMaxComputeScale);
        cost.compute_scale[node] = scale;
        cost.measured["nodes"][node]["compute_scale"] = scale;
      }
    }
    if (!kind.empty()) fixed_by_stage[kind].push_back(fixed);
    all.push_back(fixed);
  }
  if (all.empty())
    throw std::runtime_error("the experiment has no node that calls a model, so no call to measure");
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / double(v.size());
  };
  cost.mean_fixed_s = mean(all);
  for (const auto& [kind, values] : fixed_by_stage) cost.by_stage[kind] = mean(values);
  return cost;
}

}  // namespace rlwb::app
