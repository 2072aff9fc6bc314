// WorkerGroup::call_after on real worker processes: a call sent right
// behind another takes that call's outputs on each rank, and says so
// clearly when they are not there; can_follow says when that is allowed.
#include "core/rpc/protocol.h"
#include "tests/core/rpc/runtime_test_support.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

using namespace rlwb::core;

namespace {

class CallAfter : public ::testing::Test {
 protected:
  void SetUp() override {
    cluster_ = std::make_unique<rlwb::testing::LocalCluster>(std::map<std::string, int>{{"a", 2}, {"b", 2}});
  }
  std::unique_ptr<rlwb::testing::LocalCluster> cluster_;
};

Batch numbers(int64_t rows) {
  Batch b;
  b.set_tensor("x", torch::arange(rows, torch::kFloat32) + 1);
  return b;
}

TEST_F(CallAfter, TakesTheFirstCallsOutputsOnEachRank) {
  auto sq = cluster_->demo_model("sq", "a", Mesh{2, 1, 1}, {{"sleep_ms", 200}});
  auto ng = cluster_->demo_model("ng", "a", Mesh{2, 1, 1});
  ASSERT_TRUE(ng->can_follow(*sq, "square", "negate", 6));
  Batch input = numbers(6);
  WorkerGroup::keep_outputs(input, "square@1");
  GroupCall first = sq->call("square", input);
  GroupCall second = ng->call_after(first, "square@1", {{"x", "x_sq"}}, "negate", Batch{});
  // Sent before the first replied: it waits on the workers, not here.
  EXPECT_FALSE(first.wait_for(std::chrono::milliseconds(0)));
  const torch::Tensor x = numbers(6).tensor("x");
  EXPECT_TRUE(torch::equal(first.get().merged.tensor("x_sq"), x * x));
  EXPECT_TRUE(torch::equal(second.get().merged.tensor("x_neg"), -(x * x)));
  // A later call without the chaining keys sees a meta without them.
  EXPECT_TRUE(torch::equal(ng->call("negate", numbers(6)).get().merged.tensor("x_neg"), -x));
}

TEST_F(CallAfter, ColumnsFromTheControllerGoBesideTheKeptOnes) {
  auto sq = cluster_->demo_model("sq", "a", Mesh{2, 1, 1});
  auto add = cluster_->demo_model("add", "a", Mesh{2, 1, 1});
  Batch input = numbers(4);
  WorkerGroup::keep_outputs(input, "t");
  GroupCall first = sq->call("square", input);
  Batch more;
  more.set_tensor("y", torch::full({4}, 10.0f));
  // tag_rank echoes its inputs with each row's rank: the kept column and the sent one arrive together.
  GroupCall second = add->call_after(first, "t", {{"x", "x_sq"}}, "tag_rank", more);
  first.get();
  GroupResult r = second.get();
  const torch::Tensor x = numbers(4).tensor("x");
  EXPECT_TRUE(torch::equal(r.merged.tensor("x"), x * x));
  EXPECT_TRUE(torch::equal(r.merged.tensor("y"), more.tensor("y")));
  EXPECT_TRUE(torch::equal(r.merged.tensor("rank").to(torch::kInt64), torch::tensor({0, 0, 1, 1})));
}

TEST_F(CallAfter, ACallBehindOutputsThatAreNotThereFailsWithTheReason) {
  auto sq = cluster_->demo_model("sq", "a", Mesh{2, 1, 1});
  auto ng = cluster_->demo_model("ng", "a", Mesh{2, 1, 1});
  Batch input = numbers(4);
  WorkerGroup::keep_outputs(input, "square@1");
  GroupCall first = sq->call("square", input);
  GroupCall second = ng->call_after(first, "square@2", {{"x", "x_sq"}}, "negate", Batch{});
  first.get();
  try {
    second.get();
    FAIL() << "the call ran without its inputs";
  } catch (const RemoteError& e) {
    EXPECT_NE(std::string(e.what()).find("negate: its inputs were to come from the call before it on this "
                                         "worker (square@2), which did not finish here"),
              std::string::npos)
        << e.what();
  }
}

TEST_F(CallAfter, CanFollowOnlyARowKeepingCallOnTheSameDataParallelRanks) {
  auto sq = cluster_->demo_model("sq", "a", Mesh{2, 1, 1});
  auto ng = cluster_->demo_model("ng", "a", Mesh{2, 1, 1});
  auto other_pool = cluster_->demo_model("ng_b", "b", Mesh{2, 1, 1});
  auto one_rank = cluster_->demo_model("ng_1", "a", Mesh{1, 1, 1});
  auto tensor_parallel = cluster_->demo_model("tp", "a", Mesh{1, 1, 2});
  EXPECT_TRUE(ng->can_follow(*sq, "square", "negate", 8));
  EXPECT_FALSE(sq->can_follow(*ng, "negate", "square", 8)) << "negate does not declare keeping rows";
  EXPECT_FALSE(ng->can_follow(*sq, "square", "negate", 7)) << "uneven rows are padded";
  EXPECT_FALSE(other_pool->can_follow(*sq, "square", "negate", 8)) << "other processes";
  EXPECT_FALSE(one_rank->can_follow(*sq, "square", "negate", 8)) << "another split";
  EXPECT_FALSE(tensor_parallel->can_follow(*sq, "square", "mesh_coords", 8)) << "tp ranks share a chunk";
  EXPECT_FALSE(ng->can_follow(*sq, "square", "first_rank", 8)) << "rank0 does not split rows";
}

}  // namespace
