// plan_dispatch's padding marks (core/rpc/dispatch.h): a chunk that ends in
// rows added to even out the split says how many, so a method can leave
// them out of its loss and metrics.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "core/rpc/column_padding.h"
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

// Two data-parallel ranks each pad to their own widest prompt and response:
// the replies are padded alike (prompts on the left, responses on the right)
// before they are joined, and nothing else changes.
TEST(DispatchPadding, RepliesOfDifferentWidthsArePaddedToTheWidestBeforeTheyAreJoined) {
  DispatchPlan plan = plan_dispatch(DispatchMode::split_dp, Mesh{2, 1, 1}, rows(4));
  auto reply = [](torch::Tensor prompts, torch::Tensor responses) {
    Batch b;
    b.set_tensor("prompt_ids", prompts);
    b.set_tensor("responses", responses);
    b.set_tensor("reward", torch::ones({2}));
    mark_padded_column(b, "prompt_ids", PadSide::left, 9);
    mark_padded_column(b, "responses", PadSide::right, 9);
    return b;
  };
  std::vector<Batch> replies = {
      reply(torch::tensor({{1, 2, 3}, {9, 4, 5}}), torch::tensor({{6, 9}, {7, 9}})),
      reply(torch::tensor({{1, 2}, {3, 4}}), torch::tensor({{5, 6, 7, 8}, {5, 9, 9, 9}}))};
  Batch joined = collect_replies(DispatchMode::split_dp, Mesh{2, 1, 1}, plan, replies);
  EXPECT_TRUE(
      torch::equal(joined.tensor("prompt_ids"), torch::tensor({{1, 2, 3}, {9, 4, 5}, {9, 1, 2}, {9, 3, 4}})));
  EXPECT_TRUE(torch::equal(joined.tensor("responses"),
                           torch::tensor({{6, 9, 9, 9}, {7, 9, 9, 9}, {5, 6, 7, 8}, {5, 9, 9, 9}})));
  EXPECT_EQ(joined.rows(), 4);

  // A column nobody marked must still agree: the join says where it does not.
  Batch a, b;
  a.set_tensor("x", torch::zeros({2, 3}));
  b.set_tensor("x", torch::zeros({2, 2}));
  EXPECT_THROW(collect_replies(DispatchMode::split_dp, Mesh{2, 1, 1}, plan, {a, b}), std::exception);
  // A mark that is not {side, value} is refused with what it should be.
  b.meta()[kPadColumnsKey] = {{"x", "left"}};
  try {
    collect_replies(DispatchMode::split_dp, Mesh{2, 1, 1}, plan, {a, b});
    FAIL() << "took a bad mark";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("is not {side: left|right, value: NUMBER}"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace rlwb::core
