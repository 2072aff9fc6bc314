#include "app/call_cost.h"

#include <algorithm>
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

// Median seconds of each worker node's steps after the first, for the
// experiment run at `prompts` prompts a step.
std::map<std::string, double> node_seconds(const core::Experiment& one, int64_t prompts,
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
  std::map<std::string, double> out;
  for (const auto& node : exp.nodes) {
    if (!exp.models.count(node.target)) continue;  // controller-side nodes: not a worker call
    std::vector<double> seconds;
    for (std::size_t s = 1; s < result.steps.size(); ++s)
      if (auto it = result.steps[s].metrics.find("timing_s/" + node.id); it != result.steps[s].metrics.end())
        seconds.push_back(it->second);
    if (!seconds.empty()) out[node.id] = median(seconds);
  }
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
  const std::map<std::string, double> at_small = node_seconds(one, small, worker_binary);
  const std::map<std::string, double> at_big = node_seconds(one, big, worker_binary);
  const double rows_small = double(small * options.task.samples_per_prompt),
               rows_big = double(big * options.task.samples_per_prompt);
  CallCost cost;
  cost.measured = {{"rows", {rows_small, rows_big}}, {"nodes", nlohmann::json::object()}};
  std::map<std::string, std::vector<double>> fixed_by_stage;
  std::vector<double> all;
  for (const auto& [node, s_small] : at_small) {
    auto it = at_big.find(node);
    if (it == at_big.end()) continue;
    // seconds = fixed + rows * per_row through the two points.
    const double per_row = (it->second - s_small) / (rows_big - rows_small);
    const double fixed = std::max(0.0, s_small - per_row * rows_small);
    std::string kind;
    for (const auto& stage : input.stages)
      if (stage.node == node) kind = core::planner::stage_kind_name(stage.kind);
    cost.measured["nodes"][node] = {
        {"kind", kind}, {"seconds", {s_small, it->second}}, {"fixed_seconds", fixed}};
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
