#include "core/planner/plan_writer.h"

namespace rlwb::core::planner {

std::string pool_device_of(const DeviceProfile& profile) { return profile.kind == "gpu" ? "cuda" : "cpu"; }

bool plans_generation_layouts(const DeviceProfile& profile) { return profile.kind == "cpu"; }

std::string pool_name_of(const PlanInput& input, const DeviceSet& set) {
  std::string name;
  for (int m : set.models) name += (name.empty() ? "" : "_") + input.models[m].name;
  return name;
}

Experiment apply_plan(const Experiment& exp, const PlanInput& input, const Plan& plan,
                      const std::string& pool_device) {
  Experiment out = exp;
  out.pools.clear();
  for (const DeviceSet& set : plan.sets) {
    PoolSpec pool;
    pool.name = pool_name_of(input, set);
    pool.workers = set.devices;
    pool.device = pool_device;
    out.pools[pool.name] = pool;
  }
  for (std::size_t m = 0; m < input.models.size(); ++m) {
    ModelSpec& spec = out.models.at(input.models[m].name);
    const ModelLayout& l = plan.layouts[m];
    spec.pool = pool_name_of(input, plan.sets[plan.set_of_model[m]]);
    spec.parallel = {l.dp, l.tp, l.pp};
    if (input.models[m].generates && (l.generate_tp != l.tp || l.generate_pp != l.pp)) {
      spec.parallel.generate_tp = l.generate_tp;
      spec.parallel.generate_pp = l.generate_pp;
    }
  }
  if (out.raw.contains("pools")) out.raw["pools"] = nlohmann::json::object();
  return out;
}

}  // namespace rlwb::core::planner
