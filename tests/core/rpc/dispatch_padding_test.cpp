// plan_dispatch's padding marks (core/rpc/dispatch.h): a chunk that ends in
// rows added to even out the split says how many, so a method can leave
// them out of its loss and metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/rpc/dispatch.h"

namespace rlwb::core {
namespace {

Batch rows(int64_t n) {
  Batch b;
  b.set_tensor("x", torch::arange(n, torch::kFloat32));
  return b;
}

std::vector<int64_t> marks(const DispatchPlan& plan) {
  std::vector<int64_t> out;
  for (const auto& in : plan.inputs) out.push_back(in ? padding_rows(*in) : -1);
  return out;
}

TEST(DispatchPadding, OnlyChunksEndingInAddedRowsAreMarked) {
  // 10 rows over 4 ranks: 3 each, the last chunk is row 9 and two copies.
  DispatchPlan plan = plan_dispatch(DispatchMode::split_dp, Mesh{4, 1, 1}, rows(10));
  EXPECT_EQ(marks(plan), (std::vector<int64_t>{0, 0, 0, 2}));
  EXPECT_EQ(plan.padded_rows, 2);
  // 1 row over 4 ranks: three chunks are nothing but copies.
  plan = plan_dispatch(DispatchMode::split_dp, Mesh{4, 1, 1}, rows(1));
  EXPECT_EQ(marks(plan), (std::vector<int64_t>{0, 1, 1, 1}));
  // Rows that divide: no marks.
  plan = plan_dispatch(DispatchMode::split_dp, Mesh{2, 1, 1}, rows(6));
  EXPECT_EQ(marks(plan), (std::vector<int64_t>{0, 0}));
}

TEST(DispatchPadding, EveryTensorParallelRankOfADataParallelGroupGetsItsMark) {
  // dp=2, tp=2: ranks 0,1 share chunk 0 (rows 0-2), ranks 2,3 chunk 1 (3, 4 and a copy).
  DispatchPlan plan = plan_dispatch(DispatchMode::split_dp_mesh, Mesh{2, 1, 2}, rows(5));
  EXPECT_EQ(marks(plan), (std::vector<int64_t>{0, 0, 1, 1}));
  EXPECT_TRUE(torch::equal(plan.inputs[3]->tensor("x"), torch::tensor({3.0f, 4.0f, 0.0f})));
}

}  // namespace
}  // namespace rlwb::core
