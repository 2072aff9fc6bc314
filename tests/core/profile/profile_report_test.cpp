// `rlwb profile show`'s text: the hot contexts ranked by self time with
// their shares, the node and worker filters, --top, and the per-node
// breakdown of the controller's timings.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/profile/profile_report.h"
#include "tests/core/profile/profile_fixtures.h"

namespace rlwb::core::profile {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace fixtures;

std::vector<std::string> labels(const HotContexts& hot) {
  std::vector<std::string> out;
  for (const ContextPath& p : hot.paths) out.push_back(p.label());
  return out;
}

TEST(ProfileReport, HotContextsAreRankedBySelfTime) {
  const HotContexts hot = hot_contexts(grpo_profile(), {.top = 0});
  ASSERT_GE(hot.paths.size(), 3u);
  for (size_t i = 1; i < hot.paths.size(); ++i) EXPECT_GE(hot.paths[i - 1].self_ns, hot.paths[i].self_ns);
  // update/update: 240 ms a call less the linear's 100 ms, 4 steps, 2 workers.
  EXPECT_EQ(hot.paths[0].label(), "update/update");
  EXPECT_EQ(hot.paths[0].self_ns, 140'000'000LL * 8);
  EXPECT_EQ(hot.paths[0].total_ns, 240'000'000LL * 8);
  int64_t sum = 0;
  for (const ContextPath& p : hot.paths) sum += p.self_ns;
  EXPECT_EQ(hot.total_self_ns, sum);
}

TEST(ProfileReport, TableShowsSelfTotalCallsShareAndBytes) {
  const std::string text = format_hot_contexts(grpo_profile(), {.top = 3});
  EXPECT_THAT(text, ContainsRegex("RANK +SELF +SELF/STEP +TOTAL +CALLS +SHARE +BYTES +CONTEXT"));
  EXPECT_THAT(text, HasSubstr("3 of 10"));
  // update/update's self time: 1.12 s in all, 280 ms a step; 1.92 s in all; 8 calls.
  EXPECT_THAT(text, ContainsRegex("1 +1\\.12 s +280 ms +1\\.92 s +8 +[0-9.]+% +0 B +update/update\n"));
  EXPECT_THAT(text, Not(HasSubstr("aten::softmax")));  // past the top 3
}

TEST(ProfileReport, FiltersByNodeAndWorker) {
  const RunProfile p = grpo_profile();
  const HotContexts ref = hot_contexts(p, {.node = "ref", .top = 0});
  EXPECT_EQ(labels(ref), (std::vector<std::string>{"ref/log_probs", "ref/log_probs/aten::softmax", "ref"}));
  const HotContexts one = hot_contexts(p, {.node = "ref", .worker = "main/1", .top = 0});
  EXPECT_EQ(one.total_self_ns * 2, ref.total_self_ns);  // one of the two workers
  EXPECT_EQ(hot_contexts(p, {.worker = "main", .top = 0}).total_self_ns,
            hot_contexts(p, {.top = 0}).total_self_ns);
  EXPECT_TRUE(hot_contexts(p, {.worker = "main/10"}).paths.empty());  // no prefix match past a '/'
  EXPECT_THAT(format_hot_contexts(p, {.node = "nope"}),
              HasSubstr("no calling contexts recorded for node 'nope'"));
}

TEST(ProfileReport, NodeBreakdownShowsMeansAndCriticalShare) {
  ProfileShape shape;
  shape.step.gen.compute = {0.2, 0.4};
  const std::string text = format_node_breakdown(grpo_profile(shape));
  EXPECT_THAT(text,
              ContainsRegex("NODE +KIND +POOL +RANKS +WALL +DISPATCH +SLOWEST COMPUTE +MEAN COMPUTE +RANK "
                            "SPREAD +OVERHEAD +CRITICAL"));
  // gen: wall 0.405, dispatch 2 ms, slowest 400 ms, mean 300 ms, spread 200 ms, overhead 5 ms, always
  // critical.
  EXPECT_THAT(
      text,
      ContainsRegex("gen +worker +main +2 +405 ms +2\\.00 ms +400 ms +300 ms +200 ms +5\\.00 ms +100\\.0%"));
  EXPECT_THAT(text, ContainsRegex("reward +reward +- +1 +20\\.0 ms .* 0\\.0%\n"));  // never critical
}

TEST(ProfileReport, ReportNamesTheStepsAndWhatWasNotMeasured) {
  RunProfile p = grpo_profile();
  p.run = 7;
  p.workers[0].notes = {"hardware counters: perf_event_open not permitted"};
  const std::string text = format_profile_report(p, {});
  EXPECT_THAT(text, HasSubstr("Profile of run 7: steps 1-4, 4 worker windows, 4 host cores"));
  EXPECT_THAT(text, HasSubstr("note (main/0): hardware counters: perf_event_open not permitted"));
  EXPECT_THAT(text, HasSubstr("Hottest contexts"));
  EXPECT_THAT(text, HasSubstr("Nodes, mean per step (4 steps"));
}

}  // namespace
}  // namespace rlwb::core::profile
