// Every dispatch mode against 4 real worker processes, with row counts that
// don't divide by 4 (padding added and stripped).
#include "tests/core/rpc/runtime_test_support.h"

#include <gtest/gtest.h>
#include <atomic>
#include <chrono>
#include <thread>
#include <torch/torch.h>

using rlwb::core::Batch;
using rlwb::core::Mesh;

namespace {

Batch numbers(int64_t rows) {
  Batch b;
  b.set_tensor("x", torch::arange(rows, torch::kFloat32));
  std::vector<nlohmann::json> labels;
  for (int64_t i = 0; i < rows; ++i) labels.push_back("row " + std::to_string(i) + " ✓");
  b.set_objects("label", labels);
  return b;
}

class DispatchModes : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { cluster_ = new rlwb::testing::LocalCluster({{"pool", 4}}); }
  static void TearDownTestSuite() { delete cluster_; }
  static rlwb::testing::LocalCluster* cluster_;
};
rlwb::testing::LocalCluster* DispatchModes::cluster_ = nullptr;

TEST_F(DispatchModes, SplitDpChunksRowsOverRanksAndStripsPadding) {
  auto model = cluster_->demo_model("m", "pool", Mesh{4, 1, 1});
  auto result = model->call("tag_rank", numbers(10)).get();
  ASSERT_EQ(result.merged.rows(), 10);
  EXPECT_TRUE(torch::equal(result.merged.tensor("x"), torch::arange(10, torch::kFloat32)));
  // ceil(10/4) = 3 rows per rank: ranks 0,0,0,1,1,1,2,2,2,3 (rank 3's padding stripped).
  auto ranks = result.merged.tensor("rank");
  std::vector<int64_t> expected = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3};
  for (int i = 0; i < 10; ++i) EXPECT_EQ(ranks[i].item<int64_t>(), expected[i]) << "row " << i;
  EXPECT_EQ(result.merged.objects("label")[9], "row 9 ✓");
}

TEST_F(DispatchModes, SplitDpStripsPaddingForMethodsReturningSeveralRowsPerRow) {
  auto model = cluster_->demo_model("m_expand", "pool", Mesh{4, 1, 1});
  auto result = model->call("expand", numbers(5)).get();
  ASSERT_EQ(result.merged.rows(), 10);
  auto x = result.merged.tensor("x");
  EXPECT_TRUE(torch::equal(x, torch::tensor({0, 0, 1, 1, 2, 2, 3, 3, 4, 4}, torch::kFloat32)));
}

TEST_F(DispatchModes, BroadcastSendsTheSameInputToEveryRank) {
  auto model = cluster_->demo_model("m_b", "pool", Mesh{4, 1, 1});
  auto result = model->call("everyone", numbers(7)).get();
  ASSERT_EQ(result.per_rank.size(), 4u);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(result.per_rank[r].tensor("rank").item<int64_t>(), r);
    EXPECT_EQ(result.per_rank[r].tensor("rows_seen").item<int64_t>(), 7);
  }
  EXPECT_EQ(result.merged.tensor("rank").item<int64_t>(), 0);
}

TEST_F(DispatchModes, Rank0RunsOnlyOnRankZero) {
  auto model = cluster_->demo_model("m_r0", "pool", Mesh{4, 1, 1});
  auto result = model->call("first_rank", numbers(3)).get();
  EXPECT_EQ(result.merged.tensor("rank").item<int64_t>(), 0);
  for (int r = 1; r < 4; ++r) EXPECT_TRUE(result.per_rank[r].empty()) << "rank " << r << " was called";
}

TEST_F(DispatchModes, SplitDpMeshSendsOneChunkPerDpGroupAndCollectsFromCollectors) {
  // dp=2, tp=2: ranks 0,1 form DP group 0; ranks 2,3 DP group 1; collectors are tp==0.
  auto model = cluster_->demo_model("m_mesh", "pool", Mesh{2, 1, 2});
  auto result = model->call("mesh_coords", numbers(5)).get();
  ASSERT_EQ(result.merged.rows(), 5);
  EXPECT_TRUE(torch::equal(result.merged.tensor("x"), torch::arange(5, torch::kFloat32)));
  auto ranks = result.merged.tensor("rank");
  std::vector<int64_t> expected = {0, 0, 0, 2, 2};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(ranks[i].item<int64_t>(), expected[i]);
  // The non-collector of each DP group saw the same chunk as its collector.
  EXPECT_TRUE(torch::equal(result.per_rank[1].tensor("x"), result.per_rank[0].tensor("x")));
  EXPECT_TRUE(torch::equal(result.per_rank[3].tensor("x"), result.per_rank[2].tensor("x")));
  EXPECT_EQ(result.per_rank[3].tensor("tp")[0].item<int64_t>(), 1);
}

// A model training at tp=4 that generates at tp=2 (the 3D-HybridEngine):
// generation replicas {0, 2} and {1, 3} -- ranks at stride 2 -- each get
// one chunk; the collectors are ranks 0 and 1.
TEST_F(DispatchModes, SplitGenerationMeshSendsOneChunkPerGenerationReplicaAtItsStride) {
  auto model = cluster_->demo_model("m_generation", "pool", Mesh{1, 1, 4}, nlohmann::json::object(),
                                    Mesh{2, 1, 2, 1, 2});
  auto result = model->call("generation_coords", numbers(5)).get();
  ASSERT_EQ(result.merged.rows(), 5);
  EXPECT_TRUE(torch::equal(result.merged.tensor("x"), torch::arange(5, torch::kFloat32)));
  std::vector<int64_t> expected = {0, 0, 0, 1, 1};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(result.merged.tensor("rank")[i].item<int64_t>(), expected[i]);
  EXPECT_TRUE(torch::equal(result.per_rank[2].tensor("x"), result.per_rank[0].tensor("x")));
  EXPECT_TRUE(torch::equal(result.per_rank[3].tensor("x"), result.per_rank[1].tensor("x")));
  EXPECT_EQ(result.per_rank[3].tensor("dp")[0].item<int64_t>(), 1);
  EXPECT_EQ(result.per_rank[3].tensor("tp")[0].item<int64_t>(), 1);
  // The same method on a model without a generation layout runs on its training mesh.
  auto plain = cluster_->demo_model("m_generation_plain", "pool", Mesh{2, 1, 2});
  auto same = plain->call("generation_coords", numbers(5)).get();
  EXPECT_TRUE(torch::equal(same.per_rank[1].tensor("x"), same.per_rank[0].tensor("x")));
  // A generation mesh that is not the training mesh folded is refused:
  // replicas that do not cover the ranks, or a layout of other ranks.
  EXPECT_THROW(cluster_->demo_model("m_generation_bad", "pool", Mesh{1, 1, 4}, {}, Mesh{3, 1, 1, 1, 2}),
               std::invalid_argument);
  EXPECT_THROW(cluster_->demo_model("m_generation_unfolded", "pool", Mesh{1, 1, 4}, {}, Mesh{4, 1, 1}),
               std::invalid_argument);
}

TEST_F(DispatchModes, AllToAllGivesEachRankItsOwnInput) {
  auto model = cluster_->demo_model("m_a2a", "pool", Mesh{4, 1, 1});
  std::vector<Batch> inputs;
  for (int r = 0; r < 4; ++r) inputs.push_back(numbers(r + 1));  // 1, 2, 3, 4 rows
  auto result = model->call_per_rank("per_rank_echo", inputs).get();
  ASSERT_EQ(result.merged.rows(), 10);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(result.per_rank[r].rows(), r + 1);
    EXPECT_EQ(result.per_rank[r].tensor("rank")[0].item<int64_t>(), r);
  }
}

TEST_F(DispatchModes, EmptyBatchSplitsIntoEmptyChunks) {
  auto model = cluster_->demo_model("m_empty", "pool", Mesh{4, 1, 1});
  Batch empty;
  empty.set_tensor("x", torch::zeros({0}, torch::kFloat32));
  auto result = model->call("tag_rank", empty).get();
  EXPECT_EQ(result.merged.rows(), 0);
}

TEST_F(DispatchModes, ColocatedModelsInOneProcessAreCalledByName) {
  auto doubler = cluster_->demo_model("doubler", "pool", Mesh{4, 1, 1}, {{"factor", 2.0}});
  auto tripler = cluster_->demo_model("tripler", "pool", Mesh{4, 1, 1}, {{"factor", 3.0}});
  auto a = doubler->call("negate", numbers(4)).get().merged.tensor("x_neg");
  auto b = tripler->call("negate", numbers(4)).get().merged.tensor("x_neg");
  EXPECT_TRUE(torch::equal(a, torch::tensor({0, -2, -4, -6}, torch::kFloat32)));
  EXPECT_TRUE(torch::equal(b, torch::tensor({0, -3, -6, -9}, torch::kFloat32)));
}

TEST_F(DispatchModes, C10dAllReduceSumsAcrossWorkerProcesses) {
  auto model = cluster_->demo_model("m_sum", "pool", Mesh{4, 1, 1});
  auto result = model->call("global_sum", numbers(8)).get();
  // Each rank summed its own 2 rows; every row carries the all-reduced total 0+1+...+7.
  ASSERT_EQ(result.merged.rows(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_DOUBLE_EQ(result.merged.tensor("total")[i].item<double>(), 28.0);
}

// A group call completes itself: its hook runs once, when the last rank's
// reply is in -- no thread waits on the ranks.
TEST_F(DispatchModes, GroupCallHookRunsOnceWhenEveryRankHasReplied) {
  auto model = cluster_->demo_model("m_hook", "pool", Mesh{4, 1, 1}, {{"sleep_ms", 200}});
  std::atomic<int> hooks{0};
  rlwb::core::GroupCall call = model->call("square", numbers(8));
  // The hook takes a moment, so a waiter woken before it has finished would see 0.
  call.on_ready([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ++hooks;
  });
  EXPECT_FALSE(call.wait_for(std::chrono::milliseconds(0)));  // the ranks sleep 200 ms
  EXPECT_TRUE(call.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(hooks.load(), 1);
  Batch out = call.get().merged;
  EXPECT_TRUE(torch::equal(out.tensor("x_sq"), numbers(8).tensor("x").pow(2)));
  // A hook set on a ready call runs at once.
  rlwb::core::GroupCall done = model->call("square", numbers(4));
  ASSERT_TRUE(done.wait_for(std::chrono::seconds(30)));
  bool ran = false;
  done.on_ready([&] { ran = true; });
  EXPECT_TRUE(ran);
}

// One failed rank makes the call ready at once, with that rank's error.
TEST_F(DispatchModes, GroupCallIsReadyWithTheErrorWhenARankFails) {
  auto model = cluster_->demo_model("m_fail", "pool", Mesh{4, 1, 1});
  std::atomic<int> hooks{0};
  rlwb::core::GroupCall call = model->call("fail", numbers(4), {{"step", 5}});
  call.on_ready([&] { ++hooks; });
  ASSERT_TRUE(call.wait_for(std::chrono::seconds(30)));
  EXPECT_EQ(hooks.load(), 1);
  try {
    call.get();
    ADD_FAILURE() << "a failed call returned";
  } catch (const rlwb::core::RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("demo failure requested"), std::string::npos) << e.what();
  }
}

}  // namespace
