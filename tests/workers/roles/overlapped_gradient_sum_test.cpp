// OverlappedGradientSum (workers/roles/overlapped_gradient_sum.h): two ranks
// in threads over a real c10d Gloo group sum their gradients in buckets
// that start while backward is still running, and get what one summed
// all-reduce after backward gives -- also when a parameter gets no
// gradient, or a rank runs no backward at all.
#include "workers/roles/overlapped_gradient_sum.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <functional>
#include <thread>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/sequence_scores.h"
#include "workers/model/transformer.h"

namespace rlwb::workers::roles {
namespace {

// Runs body(rank, group) on two ranks at once, each with its own group
// over a loopback port the kernel picked (as tests/workers/roles/rl_test_support.h).
void on_two_ranks(const std::function<void(int, SpmdGroup&)>& body) {
  const int port = free_loopback_ports(1).front();
  std::vector<std::thread> threads;
  for (int rank = 0; rank < 2; ++rank)
    threads.emplace_back([&, rank] {
      SpmdGroup group(SpmdOptions{"127.0.0.1", port, rank, 2, std::chrono::milliseconds(30000)});
      body(rank, group);
    });
  for (auto& t : threads) t.join();
}

// Inputs and models are made before the ranks' threads start: torch's
// default generator is one for the process.
torch::Tensor ids_of(int64_t seed) {
  torch::manual_seed(seed);
  return torch::randint(1, 60, {3, 9});
}

torch::Tensor loss_of(model::Transformer& net, const torch::Tensor& ids) {
  return net->forward(ids, torch::ones_like(ids)).pow(2).mean();
}

model::Transformer seeded_model() {
  torch::manual_seed(7);
  return model::Transformer(model::testing::tiny_config());
}

TEST(OverlappedGradientSum, BucketsStartDuringBackwardAndSumAsOneAllReduceWould) {
  // What the two ranks' gradients sum to: each rank's two micro-batches
  // (seeds 10 + rank and 20 + rank), back-propagated on one model.
  std::vector<torch::Tensor> first = {ids_of(10), ids_of(11)}, last = {ids_of(20), ids_of(21)};
  std::vector<model::Transformer> nets = {seeded_model(), seeded_model()};
  model::Transformer reference = seeded_model();
  model::FlatAdamW reference_optimizer(reference->parameters(), {});
  for (int rank = 0; rank < 2; ++rank) {
    loss_of(reference, first[rank]).backward();
    loss_of(reference, last[rank]).backward();
  }
  const torch::Tensor expected = reference_optimizer.flat_gradients().clone();

  std::vector<torch::Tensor> summed(2);
  std::vector<size_t> started_in_backward(2), buckets(2);
  std::vector<std::vector<double>> ride_along(2);
  on_two_ranks([&](int rank, SpmdGroup& group) {
    model::Transformer& net = nets[rank];
    model::FlatAdamW optimizer(net->parameters(), {});
    OverlappedGradientSum sum(optimizer, group, /*bucket_bytes=*/16 << 10);
    loss_of(net, first[rank]).backward();  // an earlier micro-batch only accumulates
    sum.arm({1.0 + rank, 10.0});
    loss_of(net, last[rank]).backward();
    started_in_backward[rank] = sum.buckets_started();
    buckets[rank] = sum.buckets().size();
    ride_along[rank] = sum.finish();
    summed[rank] = optimizer.flat_gradients().clone();
  });
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_GT(buckets[rank], 2u);
    // Every bucket but the one holding the first layers (whose gradients
    // come last) started before backward returned.
    EXPECT_GE(started_in_backward[rank], buckets[rank] - 1) << "rank " << rank;
    EXPECT_TRUE(torch::allclose(summed[rank], expected, 1e-5, 1e-6))
        << "rank " << rank << " differs by " << (summed[rank] - expected).abs().max().item<double>();
    EXPECT_EQ(ride_along[rank], (std::vector<double>{3.0, 20.0}));
  }
}

TEST(OverlappedGradientSum, AParameterWithoutGradientAndARankWithoutBackwardStillSum) {
  // Three parameters of 4 KB each in buckets of one: c (last, so first),
  // b (never used: its bucket waits for finish), a.
  std::vector<torch::Tensor> summed(2);
  on_two_ranks([&](int rank, SpmdGroup& group) {
    torch::Tensor a = torch::zeros({1024}, torch::requires_grad()),
                  b = torch::zeros({1024}, torch::requires_grad()),
                  c = torch::zeros({1024}, torch::requires_grad());
    model::FlatAdamW optimizer({a, b, c}, {});
    OverlappedGradientSum sum(optimizer, group, /*bucket_bytes=*/4096);
    ASSERT_EQ(sum.buckets().size(), 3u);
    sum.arm();
    if (rank == 0) {  // rank 1 has no rows: it arms and finishes with zero gradients
      torch::Tensor x = torch::arange(1024, torch::kFloat32);
      ((a * x).sum() + (c * 2 * x).sum()).backward();
      // c's bucket started; b's never got a gradient, so a's waits behind it.
      EXPECT_EQ(sum.buckets_started(), 1u);
    }
    sum.finish();
    summed[rank] = optimizer.flat_gradients().clone();
  });
  torch::Tensor x = torch::arange(1024, torch::kFloat32);
  torch::Tensor expected = torch::cat({x, torch::zeros({1024}), 2 * x});
  for (int rank = 0; rank < 2; ++rank) EXPECT_TRUE(torch::equal(summed[rank], expected)) << "rank " << rank;
}

TEST(OverlappedGradientSum, ArmingTwiceOrFinishingUnarmedIsAnError) {
  on_two_ranks([&](int, SpmdGroup& group) {
    torch::Tensor a = torch::zeros({8}, torch::requires_grad());
    model::FlatAdamW optimizer({a}, {});
    OverlappedGradientSum sum(optimizer, group);
    EXPECT_THROW(sum.finish(), std::logic_error);
    sum.arm();
    EXPECT_THROW(sum.arm(), std::logic_error);
    sum.finish();
    EXPECT_FALSE(sum.armed());
  });
}

}  // namespace
}  // namespace rlwb::workers::roles
