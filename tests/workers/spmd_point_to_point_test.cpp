// SpmdGroup::send / recv (workers/spmd_group.h), which pipeline stages use
// to hand activations to the next stage and gradients back
// (workers/model/pipeline_parallel.h): pairs match in call order, other
// ranks are not involved, and a strided buffer is refused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/ranks_in_threads.h"
#include "workers/spmd_group.h"

namespace rlwb::workers {
namespace {

TEST(SpmdPointToPoint, SendsPairWithReceivesInOrderBetweenTwoRanksOnly) {
  std::vector<torch::Tensor> got(3);
  testing::on_ranks(3, [&](int rank, SpmdGroup& group) {
    if (rank == 0) {  // two messages to 1, then the answer back
      group.send(torch::arange(4, torch::kFloat32), 1);
      group.send(torch::full({2, 2}, 7.0f).t(), 1);  // a strided tensor is sent as its values
      got[0] = torch::empty({1});
      group.recv(got[0], 1);
    } else if (rank == 1) {
      torch::Tensor first = torch::empty({4}), second = torch::empty({2, 2});
      group.recv(first, 0);
      group.recv(second, 0);
      group.send((first.sum() + second.sum()).reshape({1}), 0);
      group.send(first * 10, 2);  // and on to the next rank
      got[1] = first;
    } else {  // rank 2 hears only from 1
      got[2] = torch::empty({4});
      group.recv(got[2], 1);
    }
  });
  EXPECT_TRUE(torch::equal(got[1], torch::arange(4, torch::kFloat32)));
  EXPECT_EQ(got[0].item<float>(), 6.0f + 28.0f);
  EXPECT_TRUE(torch::equal(got[2], torch::arange(4, torch::kFloat32) * 10));
}

TEST(SpmdPointToPoint, ReceivingIntoAStridedTensorIsRefused) {
  testing::on_ranks(2, [&](int rank, SpmdGroup& group) {
    if (rank == 1) {
      torch::Tensor strided = torch::empty({2, 2}).t();
      EXPECT_THROW(group.recv(strided, 0), std::invalid_argument);
    }
    group.barrier();
  });
}

}  // namespace
}  // namespace rlwb::workers
