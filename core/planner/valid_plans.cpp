#include "core/planner/valid_plans.h"

#include <algorithm>

#include "core/planner/plan_error.h"
#include "core/planner/plan_writer.h"

namespace rlwb::core::planner {

PlanSearch search_valid_plans(const Experiment& exp, const PlanInput& input, const DeviceProfile& profile,
                              const PlanOptions& options, const MethodCatalog& catalog, int wanted) {
  // Enough candidates that a rule breaking a few of them still leaves `wanted`.
  PlanOptions candidates = options;
  candidates.keep = wanted * 8 + 32;
  PlanSearch search = search_plans(input, profile, candidates);
  MethodCatalog checks = catalog;
  checks.machine_gpus = std::max(checks.machine_gpus, options.devices);
  checks.machine_cpu_workers = std::max(checks.machine_cpu_workers, options.devices);
  const std::string pool_device = pool_device_of(profile);
  std::vector<Plan> accepted;
  std::string first_refusal;
  for (auto& plan : search.plans) {
    const auto issues = validate_experiment(apply_plan(exp, input, plan, pool_device), checks);
    if (!has_errors(issues)) {
      accepted.push_back(std::move(plan));
    } else if (first_refusal.empty()) {
      for (const auto& issue : issues)
        if (issue.severity == Severity::error) {
          first_refusal = issue.to_string();
          break;
        }
    }
    if (static_cast<int>(accepted.size()) >= wanted) break;
  }
  if (accepted.empty())
    throw PlanError("every plan that fits breaks a rule of the graph file, e.g. " + first_refusal +
                    "; change that setting or plan for another device count");
  search.plans = std::move(accepted);
  return search;
}

}  // namespace rlwb::core::planner
