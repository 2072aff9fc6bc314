// The analyzer's rules, each on a profile bent into the problem it looks
// for, with its evidence and change checked; the clean profile triggers
// none; findings come ranked by expected gain; and a profile read back from
// a tracking DB gives the same findings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile/analyzer.h"
#include "tests/core/profile/profile_fixtures.h"
#include "tests/test_files.h"

namespace rlwb::core::profile {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace fixtures;

std::vector<Finding> of_rule(const std::vector<Finding>& findings, const std::string& rule) {
  std::vector<Finding> matching;
  for (const Finding& f : findings)
    if (f.rule == rule) matching.push_back(f);
  return matching;
}

// The one finding of `rule` in `shape`'s profile (a test failure if not exactly one).
Finding only_finding(const ProfileShape& shape, const std::string& rule) {
  const std::vector<Finding> found = of_rule(analyze(grpo_profile(shape)), rule);
  EXPECT_EQ(found.size(), 1u) << format_findings(analyze(grpo_profile(shape)));
  return found.empty() ? Finding{} : found.front();
}

TEST(Analyzer, CleanProfileHasNoFindings) {
  const std::vector<Finding> findings = analyze(grpo_profile());
  EXPECT_TRUE(findings.empty()) << format_findings(findings);
  EXPECT_THAT(format_findings(findings), HasSubstr("no findings"));
}

TEST(Analyzer, PoolIdleWhileAnotherPoolWorksOnTheCriticalPath) {
  ProfileShape shape;
  shape.step.ref_pool = "ref";
  shape.step.ref.compute = {0.1};
  shape.pools["ref"] = {{"workers", 1}, {"device", "cpu"}};
  shape.models["reference"] = {{"pool", "ref"}, {"role", "reference"}, {"dp", 1}};
  const Finding f = only_finding(shape, "pool-idle");
  EXPECT_THAT(f.title, HasSubstr("pool 'ref' idles while pool 'main'"));
  EXPECT_THAT(f.evidence, HasSubstr("runs critical-path nodes gen, update"));
  // A change that validates as written: the model moves with a dp of the
  // busy pool's workers and the idle pool goes; joining its worker is the hint.
  EXPECT_THAT(f.change, HasSubstr("models.reference.pool=main models.reference.parallel.dp=2 ~pools.ref\n"));
  EXPECT_THAT(f.change, HasSubstr("pools.main.workers=3"));
  // ref idles through gen (0.305 s) and update (0.255 s); one of three workers joins.
  EXPECT_NEAR(f.gain_s, (0.305 + 0.255) / 3, 1e-6);
  EXPECT_GT(f.gain_share, 0.2);
}

TEST(Analyzer, StragglerRankWithEqualRowsPointsAtItsWorker) {
  ProfileShape shape;
  shape.step.gen.compute = {0.30, 0.45};
  const Finding f = only_finding(shape, "straggler-rank");
  EXPECT_THAT(f.title, HasSubstr("rank 1 of node 'gen'"));
  EXPECT_THAT(f.evidence, HasSubstr("slowest in 4 of 4 steps"));
  EXPECT_THAT(f.evidence, HasSubstr("rank 1: 450 ms compute"));
  EXPECT_THAT(f.evidence, Not(HasSubstr("rows")));  // even rows are not evidence
  EXPECT_THAT(f.change, HasSubstr("worker main/1 on host-a"));
  EXPECT_NEAR(f.gain_s, 0.45 - 0.375, 1e-6);
}

TEST(Analyzer, StragglerRankWithUnevenRowsShowsRowsPerRank) {
  ProfileShape shape;
  shape.step.gen.compute = {0.30, 0.45};
  shape.step.gen.rows = {16, 24};
  const Finding f = only_finding(shape, "straggler-rank");
  EXPECT_THAT(f.evidence, HasSubstr("rank 0: 300 ms compute, 16 rows"));
  EXPECT_THAT(f.evidence, HasSubstr("rank 1: 450 ms compute, 24 rows"));
  EXPECT_THAT(f.change, HasSubstr("models.actor.parallel.dp"));
}

TEST(Analyzer, OneSlowStepIsNotAStraggler) {
  RunProfile p = grpo_profile();
  // Rank 1 is slow in step 1 only: noise, not a straggler.
  ProfileShape slow;
  slow.step.gen.compute = {0.30, 0.90};
  p.steps[0] = grpo_step(1, p.steps[0].nodes.front().start, slow.step);
  EXPECT_TRUE(of_rule(analyze(p), "straggler-rank").empty());
}

TEST(Analyzer, RewardOnTheCriticalPathSuggestsOverlapWithTheNodeWaitingForIt) {
  ProfileShape shape;
  shape.step.reward_s = 0.3;
  shape.step.ref_waits_for_reward = true;
  const Finding f = only_finding(shape, "reward-critical");
  EXPECT_THAT(f.title, HasSubstr("reward node 'reward' bounds"));
  EXPECT_THAT(f.evidence, HasSubstr("critical path in 100.0% of the steps"));
  EXPECT_THAT(f.evidence, HasSubstr("'ref' (105 ms)"));
  EXPECT_THAT(f.change, HasSubstr("overlap 'reward' with 'ref'"));
  EXPECT_NEAR(f.gain_s, 0.105, 1e-6);
}

TEST(Analyzer, CodeRewardOnTheCriticalPathSuggestsMoreExecutors) {
  ProfileShape shape;
  shape.step.reward_s = 0.3;
  shape.step.reward_call = "code.score";
  shape.step.ref_waits_for_reward = true;
  shape.rewards = {{"code", {{"type", "code"}, {"executors", 4}}}};
  shape.host_cores = 16;
  const Finding f = only_finding(shape, "reward-critical");
  EXPECT_EQ(f.change, "++rewards.code.config.executors=8");
  EXPECT_NEAR(f.gain_s, 0.15, 1e-6);
}

TEST(Analyzer, ACodeRewardWithAnExecutorPerCoreIsNotToldToAddExecutors) {
  // Measured (bench/analyzer_findings.sh): 4 executors on 2 cores were 2-4% slower than 2.
  ProfileShape shape;
  shape.step.reward_s = 0.3;
  shape.step.reward_call = "code.score";
  shape.step.ref_waits_for_reward = true;
  shape.rewards = {{"code", {{"type", "code"}, {"executors", 4}}}};
  shape.host_cores = 4;
  const Finding f = only_finding(shape, "reward-critical");
  EXPECT_THAT(f.change, HasSubstr("overlap 'reward' with 'ref'"));
}

TEST(Analyzer, RewardOffTheCriticalPathIsNotFlagged) {
  ProfileShape shape;
  shape.step.reward_s = 0.09;  // long, but ref (0.105 s) runs beside it and is longer
  EXPECT_TRUE(of_rule(analyze(grpo_profile(shape)), "reward-critical").empty());
}

TEST(Analyzer, TransferOverheadOfAWorkerNode) {
  ProfileShape shape;
  shape.step.update.transfer = 0.15;
  const Finding f = only_finding(shape, "transfer-overhead");
  EXPECT_THAT(f.title, HasSubstr("node 'update' spends 37.2% of its time moving data"));
  EXPECT_THAT(f.evidence, HasSubstr("waiting for other nodes' calls on its workers 0 -> transfer 150 ms"));
  EXPECT_THAT(f.change, HasSubstr("shm_threshold_bytes"));
  EXPECT_NEAR(f.gain_s, 0.075, 1e-6);
}

TEST(Analyzer, DispatchOverheadSuggestsLargerMicroBatches) {
  ProfileShape shape;
  shape.step.ref.dispatch = 0.05;
  shape.models["reference"]["config"] = {{"micro_batch_size", 8}};
  const Finding f = only_finding(shape, "dispatch-overhead");
  EXPECT_THAT(f.evidence,
              HasSubstr("dispatch (split, encode, send) 50.0 ms against a mean compute of 100 ms"));
  EXPECT_THAT(f.evidence, HasSubstr("runs 1.0 times per step and rank"));
  EXPECT_THAT(f.change, HasSubstr("models.reference.config.micro_batch_size=16"));
  EXPECT_NEAR(f.gain_s, 0.025, 1e-6);
}

TEST(Analyzer, SoftmaxOverATinyLastDimension) {
  ProfileShape shape;
  shape.tree.softmax_shape = "[512,8]";
  shape.tree.softmax_calls = 1000;
  const Finding f = only_finding(shape, "op-small-softmax");
  EXPECT_THAT(f.title, HasSubstr("aten::softmax over a last dimension of at most 8 under 'ref/log_probs'"));
  EXPECT_THAT(f.evidence, HasSubstr("2000 calls per step (all ranks)"));
  // 20 ms per window step and worker, all of it in tiny rows.
  EXPECT_NEAR(f.gain_s, 0.8 * 0.020, 1e-6);
}

TEST(Analyzer, CopiesOfStridedOperandsUnderAMatrixProduct) {
  ProfileShape shape;
  shape.tree.copy_ns = 30'000'000;
  const Finding f = only_finding(shape, "op-strided-copy");
  EXPECT_THAT(f.title, HasSubstr("operands of aten::linear copied under 'update/update'"));
  EXPECT_THAT(f.evidence,
              HasSubstr("aten::contiguous take 30.0 ms per step and rank (30.0% of the product's"));
  EXPECT_THAT(f.change, HasSubstr("workers/model/linear.cpp"));
  EXPECT_NEAR(f.gain_s, 0.030, 1e-6);
}

TEST(Analyzer, ManySmallOpsPerGenerateCall) {
  ProfileShape shape;
  shape.tree.generate_ops = 5000;
  shape.tree.generate_op_ns = 5000;
  const Finding f = only_finding(shape, "op-many-small-ops");
  EXPECT_THAT(f.title, HasSubstr("'gen/generate' runs 5000 small operators per call"));
  EXPECT_THAT(f.evidence, HasSubstr("5.00 us each"));
  EXPECT_NEAR(f.gain_s, 0.5 * 5000 * 5e-6, 1e-6);
}

TEST(Analyzer, ABlockingAllReduceAfterTheBackwardSuggestsOverlap) {
  ProfileShape shape;
  shape.tree.allreduce_ns = 60'000'000;  // 60 ms of the update's 240 ms, per step and worker
  const Finding f = only_finding(shape, "collective-not-overlapped");
  EXPECT_THAT(f.title, HasSubstr("'update/update' waits 25.0% of its time in the all-reduce"));
  EXPECT_THAT(f.evidence, HasSubstr("c10d::allreduce under update/update: 60.0 ms per step and rank"));
  EXPECT_THAT(f.change, HasSubstr("workers/roles/overlapped_gradient_sum.h"));
  EXPECT_NEAR(f.gain_s, 0.030, 1e-6);  // half of it; update is on the critical path in every step
  ProfileShape small = shape;
  small.tree.allreduce_ns = 10'000'000;  // 4% of the method: not worth the buckets
  EXPECT_TRUE(of_rule(analyze(grpo_profile(small)), "collective-not-overlapped").empty());
  // 2 workers x 1 thread on 2 cores: Gloo's threads would take backward's
  // cores, so overlapping does not pay (measured) -- unless the pool is on CUDA.
  ProfileShape full = shape;
  full.host_cores = 2;
  EXPECT_TRUE(of_rule(analyze(grpo_profile(full)), "collective-not-overlapped").empty());
  full.pools["main"]["device"] = "cuda";
  EXPECT_EQ(of_rule(analyze(grpo_profile(full)), "collective-not-overlapped").size(), 1u);
}

TEST(Analyzer, PipelineStagesWaitingForEachOtherSuggestMoreMicroBatches) {
  ProfileShape shape;
  shape.tree.recv_ns = 60'000'000;  // 60 ms of the update's 240 ms, per step and worker
  shape.models["actor"]["dp"] = 1;
  shape.models["actor"]["pp"] = 2;
  const Finding f = only_finding(shape, "pipeline-bubble");
  EXPECT_THAT(f.title, HasSubstr("'update/update' waits 25.0% of its time for the other pipeline stages"));
  EXPECT_THAT(f.evidence,
              HasSubstr("c10d::recv under update/update: 60.0 ms per step and rank in 4.0 receives"));
  EXPECT_THAT(f.evidence, HasSubstr("actor runs 2 stages with 4 pipeline micro-batches a pass"));
  EXPECT_THAT(f.change, HasSubstr("++models.actor.config.pipeline_micro_batches=8"));
  // The wait (p-1)/(m+p-1) = 1/5 of a pass becomes 1/9: 4/9 of it goes.
  EXPECT_NEAR(f.gain_s, 0.060 * 4.0 / 9.0, 1e-6);
  ProfileShape written = shape;
  written.models["actor"]["config"] = {{"pipeline_micro_batches", 2}};
  EXPECT_THAT(only_finding(written, "pipeline-bubble").change,
              HasSubstr("models.actor.config.pipeline_micro_batches=4 "));
  ProfileShape one_stage = shape;  // the same receives, but no stages: not this rule's
  one_stage.models["actor"]["pp"] = 1;
  EXPECT_TRUE(of_rule(analyze(grpo_profile(one_stage)), "pipeline-bubble").empty());
  ProfileShape short_wait = shape;  // 4% of the method
  short_wait.tree.recv_ns = 10'000'000;
  EXPECT_TRUE(of_rule(analyze(grpo_profile(short_wait)), "pipeline-bubble").empty());
}

TEST(Analyzer, ThreadsOversubscribeTheHost) {
  ProfileShape shape;
  shape.host_cores = 2;
  shape.tree.threads = 2;
  const Finding f = only_finding(shape, "threads-oversubscribed");
  EXPECT_THAT(f.title, HasSubstr("4 intra-op threads on 2 cores of host host-a"));
  EXPECT_THAT(f.evidence, HasSubstr("main/0: 2, main/1: 2"));
  EXPECT_THAT(f.change, HasSubstr("at most 1 intra-op threads per worker"));
  EXPECT_GT(f.gain_s, 0);
}

// The actor runs micro-batches of `micro` rows (rows per rank: 16, the
// whole batch per optimizer step unless `mini` says otherwise).
ProfileShape with_actor_batches(int64_t micro, int64_t mini = 0) {
  ProfileShape shape;
  shape.models["actor"]["micro_batch_size"] = micro;
  shape.models["actor"]["config"] = {{"micro_batch_size", micro}};  // written in the graph file
  shape.models["actor"]["mini_batch_size"] = mini;
  shape.tree.update_views = 2000;  // 10 us each: the operators' dispatch cost
  return shape;
}

TEST(Analyzer, MemoryNearTheLimitSuggestsHalfTheMicroBatch) {
  ProfileShape shape = with_actor_batches(8);
  // Its default (not in its config), more than its 16 rows per rank: 8 halves them, with "++".
  shape.models["reference"]["micro_batch_size"] = 64;
  shape.rss_peak = int64_t{3800} << 20;  // 2 x 3.71 GiB of 8 GiB
  const Finding f = only_finding(shape, "memory-near-limit");
  EXPECT_THAT(f.title, HasSubstr("host host-a uses 92.8% of its memory"));
  EXPECT_THAT(f.evidence, HasSubstr("add up to 7.42 GiB of 8.00 GiB (92.8%"));
  EXPECT_THAT(f.evidence, HasSubstr("main/0: 3.71 GiB, main/1: 3.71 GiB"));
  EXPECT_THAT(
      f.change,
      HasSubstr("models.actor.config.micro_batch_size=4 ++models.reference.config.micro_batch_size=8\n"));
  // A risk, ranked at a quarter of the step.
  EXPECT_NEAR(f.gain_share, 0.25, 1e-9);
  EXPECT_TRUE(of_rule(analyze(grpo_profile(shape)), "memory-headroom").empty());
}

TEST(Analyzer, ACudaDeviceNearItsLimitIsJudgedByItsAllocatorsPeak) {
  ProfileShape shape = with_actor_batches(8);
  shape.pools["main"]["device"] = "cuda";
  shape.memory_limit = int64_t{80} << 30;
  shape.peak = int64_t{75} << 30;
  const Finding f = only_finding(shape, "memory-near-limit");
  EXPECT_THAT(f.title, HasSubstr("the CUDA device of worker main/0 uses 93.8% of its memory"));
  EXPECT_THAT(f.change, HasSubstr("models.actor.config.micro_batch_size=4"));
}

TEST(Analyzer, UnusedMemoryWithSeveralMicroBatchesPerStepSuggestsLargerOnes) {
  const ProfileShape shape = with_actor_batches(4);  // 16 rows per rank in 4 micro-batches
  const Finding f = only_finding(shape, "memory-headroom");
  EXPECT_THAT(f.title, HasSubstr("host host-a uses 12.5% of its memory: larger micro-batches fit"));
  EXPECT_THAT(f.evidence,
              HasSubstr("actor: micro_batch_size 4 runs 4 micro-batches per optimizer step (16 rows "
                        "per rank), 2020 operator calls per step and rank at about 10.0 us"));
  // As large as the rows per rank allow: 16.
  EXPECT_THAT(f.change, HasSubstr("models.actor.config.micro_batch_size=16\n"));
  EXPECT_THAT(f.change, Not(HasSubstr("models.reference")));  // the meta names no micro-batch for it
  // 2020 operator calls per step and rank, 3/4 of them go, 10 us each, update always critical.
  EXPECT_NEAR(f.gain_s, 2020 * 10e-6 * 0.75, 1e-9);
}

TEST(Analyzer, ALargerMicroBatchIsCappedAtHalfTheLimitProjected) {
  ProfileShape shape = with_actor_batches(2);
  shape.rss_peak = int64_t{900} << 20;  // 1.76 GiB of 8 in use, 1 GiB of it the allocators'
  shape.peak = int64_t{512} << 20;
  const Finding f = only_finding(shape, "memory-headroom");
  // x2: 1.76 + 1 = 2.76 GiB (34%); x4 would be 4.76 GiB, over half of the 8.
  EXPECT_THAT(f.change, HasSubstr("models.actor.config.micro_batch_size=4\n"));
  EXPECT_THAT(f.change, HasSubstr("2.76 GiB, 34.5% of the limit"));
  EXPECT_NEAR(f.gain_s, 2020 * 10e-6 * 0.5, 1e-9);
}

TEST(Analyzer, OneMicroBatchPerOptimizerStepOrAnUnknownLimitIsNoMemoryFinding) {
  // mini_batch_size 16 over dp 2: 8 rows per rank and optimizer step, one micro-batch of 8.
  std::vector<Finding> findings = analyze(grpo_profile(with_actor_batches(8, 16)));
  EXPECT_TRUE(findings.empty()) << format_findings(findings);
  ProfileShape unknown = with_actor_batches(4);
  unknown.memory_limit = 0;
  findings = analyze(grpo_profile(unknown));
  EXPECT_TRUE(findings.empty()) << format_findings(findings);
  unknown = with_actor_batches(4);
  unknown.rss_peak = 0;
  EXPECT_TRUE(of_rule(analyze(grpo_profile(unknown)), "memory-headroom").empty());
  unknown.rss_peak = int64_t{3800} << 20;
  unknown.memory_limit = 0;
  EXPECT_TRUE(of_rule(analyze(grpo_profile(unknown)), "memory-near-limit").empty());
}

TEST(Analyzer, FindingsAreRankedByExpectedGainAndNumbered) {
  ProfileShape shape;
  shape.step.update.transfer = 0.15;      // gain 0.075 s
  shape.step.gen.compute = {0.30, 0.50};  // gain 0.1 s
  const std::vector<Finding> findings = analyze(grpo_profile(shape));
  ASSERT_EQ(findings.size(), 2u) << format_findings(findings);
  EXPECT_EQ(findings[0].rule, "straggler-rank");
  EXPECT_EQ(findings[1].rule, "transfer-overhead");
  EXPECT_GE(findings[0].score, findings[1].score);
  const std::string text = format_findings(findings);
  EXPECT_THAT(text, HasSubstr("1. [straggler-rank]"));
  EXPECT_THAT(text, HasSubstr("2. [transfer-overhead]"));
  EXPECT_THAT(text, HasSubstr("expected gain: 100 ms per step"));
}

class AnalyzerOnDbTest : public rlwb::testing::TempDirTest {
 protected:
  AnalyzerOnDbTest() : TempDirTest("rlwb-analyzer") {}
};

TEST_F(AnalyzerOnDbTest, ProfileReadBackFromTheDbGivesTheSameFindings) {
  ProfileShape shape;
  shape.step.gen.compute = {0.30, 0.45};
  shape.tree.copy_ns = 30'000'000;
  const RunProfile written = grpo_profile(shape);
  int64_t run = 0;
  {
    TrackingWriter w(path("rlwb.db"));
    run = write_profile(w, w.start_run("r", "f.yaml", "", "grpo", 1, nlohmann::json::object()), written);
    w.end_run(run, "finished");
  }
  TrackingReader r(path("rlwb.db"));
  EXPECT_EQ(format_findings(analyze(load_run_profile(r, run))), format_findings(analyze(written)));
  EXPECT_EQ(analyze(load_run_profile(r, run)).size(), 2u);
}

}  // namespace
}  // namespace rlwb::core::profile
