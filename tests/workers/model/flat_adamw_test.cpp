// FlatAdamW (workers/model/flat_adamw.h) against torch's AdamW and
// clip_grad_norm_ over the same model and gradients, and its recovery when
// something replaces a parameter or drops the gradients.
#include "workers/model/flat_adamw.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/sequence_scores.h"
#include "workers/model/transformer.h"

namespace rlwb::workers::model {
namespace {

torch::Tensor loss_of(Transformer& model, int64_t seed) {
  torch::manual_seed(seed);
  torch::Tensor ids = torch::randint(1, 60, {3, 9});
  return model->forward(ids, torch::ones_like(ids)).pow(2).mean();
}

void expect_same_parameters(Transformer& a, Transformer& b, double tol) {
  auto pa = a->parameters(), pb = b->parameters();
  ASSERT_EQ(pa.size(), pb.size());
  for (size_t i = 0; i < pa.size(); ++i)
    EXPECT_TRUE(torch::allclose(pa[i], pb[i], 0, tol))
        << "parameter " << i << " differs by " << (pa[i] - pb[i]).abs().max().item<double>();
}

TEST(FlatAdamW, FollowsTorchAdamWWithClippingAndWeightDecayStepByStep) {
  torch::manual_seed(1);
  Transformer mine(testing::tiny_config()), theirs(testing::tiny_config());
  // Each step starts both models from the same weights: what is compared
  // is the optimizer's arithmetic (kept state included), not how a rounding
  // difference in one step grows through the next forward passes (on some
  // hosts torch's vectorised AdamW kernels round differently).
  auto start_theirs_from_mine = [&] {
    torch::NoGradGuard no_grad;
    auto to = theirs->parameters(), from = mine->parameters();
    for (size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
  };
  FlatAdamW flat(mine->parameters(), AdamWSettings{0.9, 0.95, 1e-8, 0.1});
  torch::optim::AdamW reference(
      theirs->parameters(), torch::optim::AdamWOptions(1e-2).betas({0.9, 0.95}).eps(1e-8).weight_decay(0.1));
  const double max_norm = 0.05;  // small enough that every step clips
  for (int step = 0; step < 4; ++step) {
    const double lr = 1e-2 * (step + 1);
    for (auto& group : reference.param_groups())
      static_cast<torch::optim::AdamWOptions&>(group.options()).lr(lr);
    start_theirs_from_mine();
    loss_of(mine, step).backward();
    loss_of(theirs, step).backward();
    const double norm = flat.clip_gradients(max_norm);
    const double reference_norm = torch::nn::utils::clip_grad_norm_(theirs->parameters(), max_norm);
    EXPECT_NEAR(norm, reference_norm, 1e-5 * reference_norm);
    EXPECT_GT(norm, max_norm);
    flat.step(lr);
    reference.step();
    flat.zero_grad();
    reference.zero_grad();
    expect_same_parameters(mine, theirs, 1e-6);
  }
  // The gradients stay views of the flat buffer: a backward pass fills it.
  EXPECT_EQ(flat.flat_gradients().abs().sum().item<double>(), 0.0);
  loss_of(mine, 9).backward();
  EXPECT_GT(flat.flat_gradients().abs().sum().item<double>(), 0.0);
}

TEST(FlatAdamW, PicksUpAReplacedParameterAndGradientsSetToNone) {
  torch::manual_seed(2);
  Transformer model(testing::tiny_config());
  FlatAdamW flat(model->parameters(), AdamWSettings{});
  torch::Tensor embedding = model->tok_embeddings->weight;
  // A checkpoint load or another optimizer may swap a parameter's storage.
  torch::Tensor replacement = torch::full(embedding.sizes(), 0.25);
  {
    torch::NoGradGuard no_grad;
    embedding.set_data(replacement);
  }
  loss_of(model, 3).backward();
  model->zero_grad();  // sets every gradient to none
  loss_of(model, 3).backward();
  torch::Tensor expected_grad = embedding.grad().clone();
  torch::Tensor& gradients = flat.flat_gradients();
  EXPECT_TRUE(torch::equal(gradients.narrow(0, 0, embedding.numel()), expected_grad.reshape({-1})));
  flat.step(1e-3);
  // Adam's first step moves every weight with a gradient by about lr.
  torch::Tensor moved = (embedding.detach() - 0.25).abs();
  EXPECT_NEAR(moved.max().item<double>(), 1e-3, 1e-4);
}

// kInPlace: the same updates while every parameter stays in the storage it
// had (as the 3D-HybridEngine's buffers need). Not bit for bit: the forward
// passes run over differently aligned weights, which BLAS may round apart.
TEST(FlatAdamW, InPlaceGivesTheFlatBuffersUpdatesAndLeavesEveryParameterWhereItLives) {
  torch::manual_seed(4);
  Transformer flat_model(testing::tiny_config()), in_place_model(testing::tiny_config());
  {
    torch::NoGradGuard no_grad;
    auto to = in_place_model->parameters(), from = flat_model->parameters();
    for (size_t i = 0; i < to.size(); ++i) to[i].copy_(from[i]);
  }
  std::vector<const void*> where;
  for (auto& p : in_place_model->parameters()) where.push_back(p.data_ptr());
  FlatAdamW flat(flat_model->parameters(), AdamWSettings{0.9, 0.95, 1e-8, 0.1});
  FlatAdamW in_place(in_place_model->parameters(), AdamWSettings{0.9, 0.95, 1e-8, 0.1},
                     ParameterStorage::kInPlace);
  for (int step = 0; step < 3; ++step) {
    loss_of(flat_model, step).backward();
    loss_of(in_place_model, step).backward();
    const double norm = flat.clip_gradients(0.05);
    EXPECT_NEAR(in_place.clip_gradients(0.05), norm, 1e-5 * norm);
    flat.step(1e-2);
    in_place.step(1e-2);
    flat.zero_grad();
    in_place.zero_grad();
  }
  expect_same_parameters(flat_model, in_place_model, 1e-6);
  auto params = in_place_model->parameters();
  for (size_t i = 0; i < params.size(); ++i) EXPECT_EQ(params[i].data_ptr(), where[i]) << "parameter " << i;
  // The flat mode moved its model's parameters into its buffer (why kInPlace exists).
  EXPECT_NE(flat_model->parameters()[0].data_ptr(), in_place_model->parameters()[0].data_ptr());
}

TEST(FlatAdamW, InPlaceRefusesAStridedParameter) {
  torch::Tensor strided = torch::zeros({4, 6}).t().requires_grad_(true);
  EXPECT_THROW(FlatAdamW({strided}, AdamWSettings{}, ParameterStorage::kInPlace), std::invalid_argument);
  EXPECT_NO_THROW(FlatAdamW({strided}, AdamWSettings{}));  // the flat buffer takes any layout
}

}  // namespace
}  // namespace rlwb::workers::model
