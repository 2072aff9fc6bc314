#include "core/planner/plan_writer.h"

namespace rlwb::core::planner {

bool graph_file_has_generation_layout() { return false; }

std::string pool_device_of(const DeviceProfile& profile) { return profile.kind == "gpu" ? "cuda" : "cpu"; }

std::string pool_name_of(const PlanInput& input, const DeviceSet& set) {
  std::string name;
  for (int m : set.models) name += (name.empty() ? "" : "_") + input.models[m].name;
  return name;
}

namespace {

// Where the generation layout will go once the graph file has its key.
void write_generation_layout(Experiment& out, const std::string& model, const ModelLayout& layout) {
  if (!graph_file_has_generation_layout()) return;
  out.raw["models"][model]["parallel"]["generate"] = {{"tp", layout.generate_tp}, {"pp", layout.generate_pp}};
}

}  // namespace

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
    if (input.models[m].generates) write_generation_layout(out, spec.name, l);
  }
  if (out.raw.contains("pools")) out.raw["pools"] = nlohmann::json::object();
  return out;
}

}  // namespace rlwb::core::planner
