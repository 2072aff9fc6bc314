// SpmdGroup::send / recv (workers/spmd_group.h), which pipeline stages use
// to hand activations to the next stage and gradients back
// (workers/model/pipeline_parallel.h): pairs match in call order, other
// ranks are not involved, sends left running go on without their
// receives and pair by tag, and a strided buffer is refused.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <atomic>
#include <chrono>
#include <thread>

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

// What pipeline micro-batches need: the sender goes on before anyone
// receives, and a receive takes the message of its own tag whatever the
// order of the sends.
TEST(SpmdPointToPoint, SendsLeftRunningLetTheSenderGoOnAndMeetTheirReceivesByTag) {
  std::atomic<bool> sender_went_on{false};
  torch::Tensor first_tag = torch::empty({3}), second_tag = torch::empty({2});
  testing::on_ranks(2, [&](int rank, SpmdGroup& group) {
    if (rank == 0) {
      group.send_in_background(torch::full({3}, 1.0f), 1, /*tag=*/0);
      group.send_in_background(torch::full({2}, 2.0f), 1, /*tag=*/1);
      sender_went_on = true;
      group.wait_background_sends();
      group.wait_background_sends();  // nothing left: returns at once
    } else {
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (!sender_went_on && std::chrono::steady_clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      ASSERT_TRUE(sender_went_on) << "the sends waited for their receives";
      group.recv(second_tag, 0, /*tag=*/1);  // the later send first
      group.recv(first_tag, 0, /*tag=*/0);
    }
  });
  EXPECT_TRUE(torch::equal(first_tag, torch::full({3}, 1.0f)));
  EXPECT_TRUE(torch::equal(second_tag, torch::full({2}, 2.0f)));
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
