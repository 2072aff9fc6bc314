#include "core/planner/planner.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <vector>

#include "core/mesh/mesh.h"
#include "core/planner/plan_error.h"
#include "core/planner/precision.h"
#include "core/planner/step_simulation.h"
#include "core/planner/paper_workload.h"

namespace rlwb::core::planner {
namespace {

TEST(Planner, FourModelsOn128DevicesSearchEveryPlacementAndFindFeasiblePlans) {
  const PlanInput input = paper_ppo_input("7b");
  PlanOptions options;
  options.devices = 128;
  options.max_pp = 8;
  options.generation_layouts = true;
  options.keep = 100000;
  const PlanSearch search = search_plans(input, load_device_profile("A100-80G"), options);
  EXPECT_EQ(search.placements, 15);
  EXPECT_EQ(search.allocations, static_cast<long long>(search.plans.size()));
  std::set<std::size_t> set_counts;
  for (const Plan& plan : search.plans) set_counts.insert(plan.sets.size());
  EXPECT_EQ(set_counts, (std::set<std::size_t>{1, 2, 3, 4})) << "every kind of placement has a feasible plan";
  for (std::size_t i = 1; i < search.plans.size(); ++i)
    EXPECT_LE(search.plans[i - 1].step.seconds, search.plans[i].step.seconds);
  for (const Plan& plan : search.plans) {
    int devices = 0;
    for (const auto& set : plan.sets) devices += set.devices;
    EXPECT_EQ(devices, 128);
  }
}

TEST(Planner, AMemoryInfeasibleLayoutIsNeverChosen) {
  // 13B models on 16 A100s: one device cannot hold a trained 13B model
  // (16 bytes a parameter), so every plan must split the models.
  const PlanInput input = paper_ppo_input("13b", 128);
  DeviceProfile profile = load_device_profile("A100-80G");
  PlanOptions options;
  options.devices = 16;
  options.max_pp = 4;
  options.keep = 1000;
  const PlanSearch search = search_plans(input, profile, options);
  ASSERT_FALSE(search.plans.empty());
  const Precision precision = precision_named(profile.precision);
  const ModelLayout alone{1, 1, 16, 1, 1};
  EXPECT_GT(
      model_memory(input.models[0], alone, input.workload, precision, profile.kv_cache_budget()).total(),
      profile.usable_memory());
  for (const Plan& plan : search.plans) {
    for (const DeviceSet& set : plan.sets) {
      EXPECT_LE(set.memory_per_device, profile.usable_memory());
      std::vector<MemoryUse> uses;
      for (int m : set.models)
        uses.push_back(model_memory(input.models[m], plan.layouts[m], input.workload, precision,
                                    profile.kv_cache_budget()));
      EXPECT_DOUBLE_EQ(set_memory(uses), set.memory_per_device);
    }
    EXPECT_NE(plan.layouts[0], alone);
  }
}

TEST(Planner, TooFewDevicesForAnyPlacementSaysWhatToChange) {
  const PlanInput input = paper_ppo_input("70b", 64);
  PlanOptions options;
  options.devices = 2;
  try {
    search_plans(input, load_device_profile("A100-80G"), options);
    FAIL() << "a 70B PPO fitted on 2 devices";
  } catch (const PlanError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no placement of the 4 models fits on 2 A100-80G"), std::string::npos) << message;
    EXPECT_NE(message.find("actor: needs at least"), std::string::npos) << message;
    EXPECT_NE(message.find("--devices"), std::string::npos) << message;
  }
}

TEST(Planner, GenerationLayoutsAreOnesTheHybridEngineAccepts) {
  const PlanInput input = paper_ppo_input("7b");
  LayoutLimits limits{8, 4, true};
  const auto layouts = candidate_layouts(input.models[0], 16, input.workload, limits);
  bool some_differ = false, fewer_stages = false, fewer_stages_with_tp = false;
  for (const ModelLayout& l : layouts) {
    EXPECT_EQ(l.tp % l.generate_tp, 0);
    EXPECT_EQ(l.pp % l.generate_pp, 0);
    // The controller can dispatch over each one's generation replicas.
    EXPECT_TRUE(core::generation_mesh({l.dp, l.pp, l.tp}, l.generate_pp, l.generate_tp).has_value());
    EXPECT_EQ(l.devices(), 16);
    some_differ = some_differ || l.generate_tp != l.tp;
    fewer_stages = fewer_stages || l.generate_pp < l.pp;
    fewer_stages_with_tp = fewer_stages_with_tp || (l.generate_pp < l.pp && l.generate_tp > 1);
  }
  EXPECT_TRUE(some_differ);
  EXPECT_TRUE(fewer_stages);
  EXPECT_TRUE(fewer_stages_with_tp) << "fewer generation stages go with any t_g that divides t";
  for (const ModelLayout& l : candidate_layouts(input.models[2], 16, input.workload, limits))
    EXPECT_TRUE(l.generate_tp == l.tp && l.generate_pp == l.pp) << "only the actor generates";
}

TEST(StepSimulation, ColocatedStagesAddAndSeparateSetsOverlap) {
  const PlanInput input = paper_ppo_input("7b");
  std::vector<StageTime> times(input.stages.size());
  for (std::size_t i = 0; i < times.size(); ++i)
    if (input.stages[i].model >= 0) times[i].compute = 1.0;
  // All on one set: the six model stages one after another.
  EXPECT_DOUBLE_EQ(simulate_step(input, {0, 0, 0, 0}, times).seconds, 6.0);
  // Each model apart: gen, then ref/values/reward at once, then both updates at once.
  EXPECT_DOUBLE_EQ(simulate_step(input, {0, 1, 2, 3}, times).seconds, 3.0);
  // Critic with the actor: values waits for gen; the updates share set 0.
  EXPECT_DOUBLE_EQ(simulate_step(input, {0, 0, 1, 2}, times).seconds, 4.0);
}

TEST(Planner, NodesBoundTheTensorParallelGroupToOneNodesDevices) {
  const PlanInput input = paper_ppo_input("7b");
  PlanOptions options;
  options.devices = 64;
  options.nodes = 32;  // 2 devices a node
  options.max_pp = 8;
  options.keep = 1000;
  const PlanSearch search = search_plans(input, load_device_profile("A100-80G"), options);
  ASSERT_FALSE(search.plans.empty());
  for (const Plan& plan : search.plans)
    for (const ModelLayout& l : plan.layouts) EXPECT_LE(l.tp, 2);
  options.nodes = 7;
  EXPECT_THROW(search_plans(input, load_device_profile("A100-80G"), options), PlanError);
}

TEST(StepSimulation, StagesOnMoreDevicesThanCoresShareThem) {
  PlanInput input;
  input.models.resize(2);
  input.stages = {{"a", StageKind::kForward, 0, {}}, {"b", StageKind::kForward, 1, {}}};
  std::vector<StageTime> times(2);
  times[0].compute = 1.0;
  times[1].compute = 2.0;
  // Two sets of 2 devices on 2 cores: while both run, each at half speed;
  // b then finishes alone at full speed: a ends at 2, b at 2 + 1.
  const StepEstimate shared = simulate_step(input, {0, 1}, times, {2, 2}, 2);
  EXPECT_DOUBLE_EQ(shared.stages[0].end(), 2.0);
  EXPECT_DOUBLE_EQ(shared.seconds, 3.0);
  // Enough cores (or a GPU profile, 0): no sharing.
  EXPECT_DOUBLE_EQ(simulate_step(input, {0, 1}, times, {2, 2}, 4).seconds, 2.0);
  EXPECT_DOUBLE_EQ(simulate_step(input, {0, 1}, times, {2, 2}, 0).seconds, 2.0);
}

// A calibrated compute scale multiplies its node's compute, in every
// layout, for the experiment it was measured on; another experiment's
// plans (a node of the same id) are priced as before.
TEST(Planner, ACalibratedComputeScaleCountsForItsExperimentsNodeOnly) {
  PlanInput input = paper_ppo_input("7b");
  input.experiment = "ppo-7b";
  const std::string node = input.stages.back().node;
  PlanOptions options;
  options.devices = 16;
  options.keep = 100000;
  DeviceProfile profile = load_device_profile("A100-80G");
  // The node's time in each plan, by placement and layouts.
  auto times_of = [&](const DeviceProfile& prof) {
    std::map<std::vector<int>, StageTime> out;
    for (const Plan& plan : search_plans(input, prof, options).plans) {
      std::vector<int> key = plan.set_of_model;
      for (const ModelLayout& l : plan.layouts)
        key.insert(key.end(), {l.tp, l.pp, l.dp, l.generate_tp, l.generate_pp});
      for (const auto& stage : plan.step.stages)
        if (stage.node == node) out[key] = stage.time;
    }
    return out;
  };
  const auto plain = times_of(profile);
  ASSERT_GT(plain.size(), 10u);
  profile.compute_scale = {"ppo-7b", {{node, 3.0}}};
  const auto scaled = times_of(profile);
  ASSERT_EQ(scaled.size(), plain.size());
  for (const auto& [key, time] : scaled) {
    const StageTime& before = plain.at(key);
    EXPECT_NEAR(time.compute, 3.0 * before.compute, 1e-9 * before.compute);
    EXPECT_DOUBLE_EQ(time.communication, before.communication);
    EXPECT_DOUBLE_EQ(time.overhead, before.overhead);
  }
  profile.compute_scale.experiment = "another";
  for (const auto& [key, time] : times_of(profile)) EXPECT_DOUBLE_EQ(time.compute, plain.at(key).compute);
}

}  // namespace
}  // namespace rlwb::core::planner
