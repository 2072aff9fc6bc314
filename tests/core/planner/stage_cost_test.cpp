// The stage and collective costs that the measured runs showed missing
// (bench/RESULTS.md, "The planner", run 4): a prompt that its
// samples share is run once, and a collective among processes that share
// too few cores waits on descheduled peers.
#include "core/planner/stage_cost.h"

#include <gtest/gtest.h>

#include "core/planner/collective_cost.h"
#include "core/planner/paper_workload.h"

namespace rlwb::core::planner {
namespace {

TEST(StageCost, APromptItsSamplesShareIsRunOnceInAForwardPass) {
  PlanInput input = paper_ppo_input("7b");
  DeviceProfile profile = load_device_profile("A100-80G");
  profile.op_overhead_s = 0;  // FLOPs alone, so that the ratio is exact
  const Precision precision = precision_named(profile.precision);
  const PlannedModel& ref = input.models[input.model_index("ref")];
  const ModelLayout layout{1, 1, 8, 1, 1};
  // 512 rows either way, of 256 prompt and 64 response tokens; micro-batches
  // of 8 rows hold whole groups of 8 samples.
  auto forward = [&](int64_t prompts, int64_t samples) {
    const Workload w{prompts, samples, 256, 64};
    return stage_time(StageKind::kForward, ref, layout, {profile, precision, w}).compute;
  };
  const double distinct = forward(512, 1), shared = forward(64, 8);
  // Per 8 rows: one prompt and 8 responses, against 8 of each. Attention
  // is priced at the mean context either way, so the ratio is the positions'.
  EXPECT_NEAR(shared / distinct, (256.0 + 8 * 64.0) / (8 * (256.0 + 64.0)), 1e-9);
  // One sample a prompt: nothing shared, as before.
  EXPECT_DOUBLE_EQ(forward(512, 1), distinct);
}

TEST(CollectiveCost, AGroupOnCoresOtherBusyProcessesShareWaitsAsTheLargerGroupDoes) {
  DeviceProfile profile;
  profile.collectives["all_reduce"] = {{2, 0.4e-3, 1e9}, {4, 6.0e-3, 1e9}};
  const double alone = collective_seconds(profile, Collective::kAllReduce, 2, 0, false);
  EXPECT_NEAR(alone, 0.4e-3, 1e-12);
  // A 4-process all-reduce has 6 ring hops (6 ms: 1 ms a hop); a 2-rank one
  // has 2, each now a crowded hop.
  EXPECT_NEAR(collective_seconds(profile, Collective::kAllReduce, 2, 0, false, 4), 2.0e-3, 1e-12);
  // No more processes than ranks: nothing changes.
  EXPECT_NEAR(collective_seconds(profile, Collective::kAllReduce, 2, 0, false, 2), alone, 1e-12);
  // The bytes' part is the group's own.
  EXPECT_NEAR(collective_seconds(profile, Collective::kAllReduce, 2, 1e6, false, 4) -
                  collective_seconds(profile, Collective::kAllReduce, 2, 0, false, 4),
              1e6 / 1e9, 1e-12);
}

}  // namespace
}  // namespace rlwb::core::planner
