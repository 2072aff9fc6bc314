// The 3D-HybridEngine's rank grouping (workers/hybrid_engine/hybrid_layout.h):
// the paper's figure 8, the containment every layout must give (each
// rank's generation shard holds its training shard, and a micro-DP group's
// training shards tile its generation shard), the groups partitioning the
// pool, the errors for layouts the engine cannot honour, and table 2.
#include <gtest/gtest.h>

#include <set>

#include "core/rpc/dispatch.h"
#include "workers/hybrid_engine/hybrid_layout.h"
#include "workers/mesh_groups.h"
#include "workers/model/tensor_parallel.h"

namespace rlwb::workers::hybrid_engine {
namespace {

using Groups = std::vector<std::vector<int>>;

Groups groups_of(const HybridLayout& layout, std::vector<int> (HybridLayout::*members)(int) const) {
  std::set<std::vector<int>> seen;
  for (int r = 0; r < layout.world(); ++r) seen.insert((layout.*members)(r));
  return {seen.begin(), seen.end()};
}

TEST(HybridLayout, GroupsRanksAsThePapersFigureEight) {
  const HybridLayout layout({.pp = 1, .tp = 4, .dp = 2}, {.pp = 1, .tp = 2});
  EXPECT_EQ(layout.micro_dp_size(), 2);
  EXPECT_EQ(groups_of(layout, &HybridLayout::micro_dp_ranks), (Groups{{0, 1}, {2, 3}, {4, 5}, {6, 7}}));
  EXPECT_EQ(groups_of(layout, &HybridLayout::generation_tp_ranks), (Groups{{0, 2}, {1, 3}, {4, 6}, {5, 7}}));
  EXPECT_EQ(layout.placement(3).generation_tp_index, 1);
  EXPECT_EQ(layout.placement(3).micro_dp_index, 1);
}

TEST(HybridLayout, GenerationAtTpOneGathersTheWholeTrainingTpGroup) {
  const HybridLayout layout({.pp = 1, .tp = 2, .dp = 2}, {.pp = 1, .tp = 1});
  EXPECT_EQ(groups_of(layout, &HybridLayout::micro_dp_ranks), (Groups{{0, 1}, {2, 3}}));
  EXPECT_EQ(groups_of(layout, &HybridLayout::generation_tp_ranks), (Groups{{0}, {1}, {2}, {3}}));
}

struct Layouts {
  TrainingLayout train;
  GenerationLayout generate;
};

std::string name_of(const Layouts& l) {
  return "p" + std::to_string(l.train.pp) + "t" + std::to_string(l.train.tp) + "d" +
         std::to_string(l.train.dp) + "_to_p" + std::to_string(l.generate.pp) + "t" +
         std::to_string(l.generate.tp);
}
void PrintTo(const Layouts& l, std::ostream* os) { *os << name_of(l); }

class EveryHybridLayout : public ::testing::TestWithParam<Layouts> {};

// A rank's part [start, end) of `total` items split `parts` ways, as a set.
std::set<int64_t> items_of(int64_t total, int index, int parts) {
  const model::Shard s = model::shard_of(total, index, parts);
  std::set<int64_t> items;
  for (int64_t k = s.start; k < s.start + s.size; ++k) items.insert(k);
  return items;
}

TEST_P(EveryHybridLayout, MicroDpGroupsTileEachGenerationShardWithTheirTrainingShards) {
  const HybridLayout layout(GetParam().train, GetParam().generate);
  const TrainingLayout& t = layout.train();
  const GenerationLayout& g = layout.generate();
  const int64_t columns = 24 * t.tp, layers = 6 * t.pp;  // divide by every tp and pp here
  for (int r = 0; r < layout.world(); ++r) {
    const HybridPlacement at = layout.placement(r);
    const std::vector<int> group = layout.micro_dp_ranks(r);
    ASSERT_EQ(static_cast<int>(group.size()), layout.micro_dp_size());
    EXPECT_EQ(group[at.micro_dp_index], r) << "rank " << r << " sits in its own slot";
    // The (layer, column) items the group's training shards hold, each once...
    std::set<std::pair<int64_t, int64_t>> held;
    for (int member : group) {
      const HybridPlacement m = layout.placement(member);
      EXPECT_EQ(m.replica, at.replica);
      EXPECT_EQ(m.generation_stage, at.generation_stage);
      EXPECT_EQ(m.generation_tp_index, at.generation_tp_index);
      for (int64_t l : items_of(layers, m.stage, t.pp))
        for (int64_t c : items_of(columns, m.tp_index, t.tp)) EXPECT_TRUE(held.insert({l, c}).second);
    }
    // ...are exactly the generation shard of every member.
    std::set<std::pair<int64_t, int64_t>> generation_shard;
    for (int64_t l : items_of(layers, at.generation_stage, g.pp))
      for (int64_t c : items_of(columns, at.generation_tp_index, g.tp)) generation_shard.insert({l, c});
    EXPECT_EQ(held, generation_shard) << "rank " << r;
  }
}

// The embedding's and the head's rows are split over a training
// replica's p t ranks in vocab_index order (mesh_groups.h): the shares of
// a micro-DP group, in slot order, must be its generation replica's share
// of p_g t_g, back to back -- what the engine's one all-gather yields.
TEST_P(EveryHybridLayout, AMicroDpGroupsVocabularySharesAreItsGenerationShareInSlotOrder) {
  const HybridLayout layout(GetParam().train, GetParam().generate);
  const core::Mesh training = layout.training_mesh(), generation = layout.generation_mesh();
  const int parts = layout.train().pp * layout.train().tp;
  const int generation_parts = layout.generate().pp * layout.generate().tp;
  const int64_t vocab = 12 * parts;
  for (int r = 0; r < layout.world(); ++r) {
    const HybridPlacement at = layout.placement(r);
    const std::vector<int> replica = vocab_parallel_ranks(training, generation, r);
    ASSERT_EQ(static_cast<int>(replica.size()), parts);
    EXPECT_EQ(replica.at(vocab_index(generation, r)), r) << "rank " << r << " sits at its share";
    const int generation_share = at.generation_stage * layout.generate().tp + at.generation_tp_index;
    EXPECT_EQ(layout.generation_vocab_ranks(r).at(generation_share), r) << "rank " << r;
    std::vector<int64_t> gathered;
    for (int member : layout.micro_dp_ranks(r))
      for (int64_t v : items_of(vocab, vocab_index(generation, member), parts)) gathered.push_back(v);
    const std::set<int64_t> want = items_of(vocab, generation_share, generation_parts);
    EXPECT_EQ(gathered, std::vector<int64_t>(want.begin(), want.end())) << "rank " << r;
  }
}

TEST_P(EveryHybridLayout, GroupsPartitionThePoolAndAgreeOnTheirMembers) {
  const HybridLayout layout(GetParam().train, GetParam().generate);
  for (auto members : {&HybridLayout::micro_dp_ranks, &HybridLayout::generation_tp_ranks,
                       &HybridLayout::generation_pp_ranks, &HybridLayout::generation_vocab_ranks}) {
    std::multiset<int> covered;
    for (const auto& group : groups_of(layout, members)) {
      for (int r : group) {
        covered.insert(r);
        EXPECT_EQ((layout.*members)(r), group) << "rank " << r;
      }
    }
    EXPECT_EQ(static_cast<int>(covered.size()), layout.world());
    EXPECT_EQ(static_cast<int>(std::set<int>(covered.begin(), covered.end()).size()), layout.world());
  }
  // A generation replica: t_g p_g ranks, one per (stage, tp index).
  for (int r = 0; r < layout.world(); ++r)
    EXPECT_EQ(static_cast<int>(layout.generation_tp_ranks(r).size()), layout.generate().tp);
}

TEST_P(EveryHybridLayout, WithEqualStagesMicroDpRanksAreConsecutiveAndGenerationTpRanksStrided) {
  const HybridLayout layout(GetParam().train, GetParam().generate);
  if (layout.train().pp != layout.generate().pp)
    GTEST_SKIP() << "p_g < p groups stages, not consecutive ranks";
  for (int r = 0; r < layout.world(); ++r) {
    const std::vector<int> micro = layout.micro_dp_ranks(r), tp = layout.generation_tp_ranks(r);
    for (size_t k = 1; k < micro.size(); ++k) EXPECT_EQ(micro[k], micro[k - 1] + 1);
    for (size_t k = 1; k < tp.size(); ++k) EXPECT_EQ(tp[k], tp[k - 1] + layout.micro_dp_size());
  }
}

// The controller dispatches a generate call over generation_mesh(): each
// rank must get its generation replica's rows, and only one rank of each
// replica's last stage is collected.
TEST_P(EveryHybridLayout, TheGenerationMeshGivesEachRankItsGenerationReplica) {
  const HybridLayout layout(GetParam().train, GetParam().generate);
  const core::Mesh mesh = layout.generation_mesh();
  EXPECT_EQ(mesh.world(), layout.world());
  std::set<int> collected_replicas;
  for (int r = 0; r < layout.world(); ++r) {
    const HybridPlacement p = layout.placement(r);
    EXPECT_EQ(mesh.dp_index(r), p.replica * layout.micro_dp_size() + p.micro_dp_index) << "rank " << r;
    EXPECT_EQ(mesh.tp_index(r), p.generation_tp_index) << "rank " << r;
    EXPECT_EQ(mesh.pp_index(r), p.generation_stage) << "rank " << r;
    if (mesh.is_collector(r)) EXPECT_TRUE(collected_replicas.insert(mesh.dp_index(r)).second);
  }
  EXPECT_EQ(static_cast<int>(collected_replicas.size()), mesh.dp);
}

INSTANTIATE_TEST_SUITE_P(Layouts, EveryHybridLayout,
                         ::testing::Values(Layouts{{1, 2, 1}, {1, 1}}, Layouts{{1, 4, 1}, {1, 2}},
                                           Layouts{{1, 4, 2}, {1, 2}}, Layouts{{1, 2, 2}, {1, 1}},
                                           Layouts{{1, 4, 1}, {1, 4}}, Layouts{{1, 8, 1}, {1, 2}},
                                           Layouts{{2, 2, 1}, {2, 1}}, Layouts{{2, 4, 2}, {1, 2}},
                                           Layouts{{4, 2, 1}, {2, 2}}, Layouts{{2, 2, 2}, {1, 1}},
                                           Layouts{{4, 2, 1}, {2, 1}}),
                         [](const ::testing::TestParamInfo<Layouts>& info) { return name_of(info.param); });

std::string error_of(TrainingLayout train, GenerationLayout generate) {
  try {
    HybridLayout layout(train, generate);
  } catch (const HybridLayoutError& e) {
    return e.what();
  }
  return "";
}

TEST(HybridLayout, RefusesAGenerationTpThatDoesNotDivideTheTrainingTpAndSaysWhichWould) {
  const std::string error = error_of({.pp = 1, .tp = 4, .dp = 1}, {.pp = 1, .tp = 3});
  EXPECT_NE(error.find("'tp' = 3 must divide the training layout's 'tp' = 4"), std::string::npos) << error;
  EXPECT_NE(error.find("choose one of 1, 2, 4"), std::string::npos) << error;
  EXPECT_NE(error_of({.pp = 1, .tp = 2, .dp = 2}, {.pp = 1, .tp = 4}).find("must divide"), std::string::npos);
  EXPECT_NE(error_of({.pp = 2, .tp = 2, .dp = 1}, {.pp = 4, .tp = 1}).find("'pp' = 4"), std::string::npos);
}

TEST(HybridLayout, RefusesSizesBelowOneAndRanksOutsideThePool) {
  EXPECT_NE(error_of({.pp = 1, .tp = 0, .dp = 1}, {}).find("training layout: 'tp' = 0 must be at least 1"),
            std::string::npos);
  EXPECT_NE(error_of({}, {.pp = 0, .tp = 1}).find("generation layout: 'pp' = 0"), std::string::npos);
  const HybridLayout layout({.pp = 1, .tp = 2, .dp = 1}, {});
  EXPECT_THROW(layout.placement(2), HybridLayoutError);
}

TEST(ReshardCost, IsThePapersTableTwo) {
  const HybridLayout layout({.pp = 1, .tp = 4, .dp = 2}, {.pp = 1, .tp = 2});
  const ReshardCost ds = deepspeed_chat_cost(layout), v = hybridflow_v_cost(layout),
                    hf = hybrid_engine_cost(layout);
  EXPECT_DOUBLE_EQ(ds.bytes_moved, 7.0 / 8);  // (tpd - 1)/tpd
  EXPECT_DOUBLE_EQ(ds.peak_memory, 1.0);
  EXPECT_DOUBLE_EQ(ds.redundancy, 1.0 / 8);
  EXPECT_DOUBLE_EQ(v.bytes_moved, 3.0 / 4);  // (tp - 1)/tp
  EXPECT_DOUBLE_EQ(v.peak_memory, 1.0);
  EXPECT_DOUBLE_EQ(v.redundancy, 1.0 / 4);
  EXPECT_DOUBLE_EQ(hf.bytes_moved, 1.0 / 4);  // (tp - t_g p_g)/(t_g p_g tp) = 2/8
  EXPECT_DOUBLE_EQ(hf.peak_memory, 1.0 / 2);  // 1/(t_g p_g)
  EXPECT_DOUBLE_EQ(hf.redundancy, 0.0);
  EXPECT_DOUBLE_EQ(hybrid_engine_cost(HybridLayout({.tp = 4}, {.tp = 4})).bytes_moved, 0.0);
}

}  // namespace
}  // namespace rlwb::workers::hybrid_engine
