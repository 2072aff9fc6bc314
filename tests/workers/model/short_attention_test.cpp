// The one-kernel attention over short rows (workers/model/short_attention.h):
// its output and its three gradients against the definition in float64,
// for the layouts the Transformer hands it (q, k, v as strided views of
// their projections, grouped-query heads, left padding, causal, one
// decoding query), and the calls it leaves to ATen.
#include "workers/model/short_attention.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <string>

#include "workers/model/layers.h"

namespace rlwb::workers::model {
namespace {

// softmax(q k^T / sqrt(D), masked) v with query head h reading KV head
// h / (H / H_kv), in plain tensor ops.
torch::Tensor attention_by_definition(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& attend) {
  const int64_t group = q.size(1) / k.size(1);
  torch::Tensor kk = k.repeat_interleave(group, 1), vv = v.repeat_interleave(group, 1);
  torch::Tensor scores = torch::matmul(q, kk.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  scores = scores.masked_fill(attend.logical_not(), -std::numeric_limits<double>::infinity());
  return torch::matmul(scores.softmax(-1), vv);
}

double largest_difference(const torch::Tensor& a, const torch::Tensor& b) {
  return (a.to(torch::kFloat64) - b.to(torch::kFloat64)).abs().max().item<double>();
}

struct Shape {
  int64_t batch, heads, kv_heads, queries, keys, dim;
};

// q [B, H, T, D] and k, v [B, H_kv, S, D] as the Transformer makes them:
// transposed views of [B, T, heads * D] projections, which are the leaves.
struct Inputs {
  torch::Tensor q_leaf, k_leaf, v_leaf, q, k, v;
};

Inputs make_inputs(const Shape& s, torch::Dtype dtype) {
  Inputs in;
  in.q_leaf = torch::randn({s.batch, s.queries, s.heads * s.dim}, dtype).requires_grad_(true);
  in.k_leaf = torch::randn({s.batch, s.keys, s.kv_heads * s.dim}, dtype).requires_grad_(true);
  in.v_leaf = torch::randn({s.batch, s.keys, s.kv_heads * s.dim}, dtype).requires_grad_(true);
  in.q = in.q_leaf.view({s.batch, s.queries, s.heads, s.dim}).transpose(1, 2);
  in.k = in.k_leaf.view({s.batch, s.keys, s.kv_heads, s.dim}).transpose(1, 2);
  in.v = in.v_leaf.view({s.batch, s.keys, s.kv_heads, s.dim}).transpose(1, 2);
  return in;
}

Inputs in_float64(const Inputs& in, const Shape& s) {
  Inputs out;
  out.q_leaf = in.q_leaf.detach().to(torch::kFloat64).requires_grad_(true);
  out.k_leaf = in.k_leaf.detach().to(torch::kFloat64).requires_grad_(true);
  out.v_leaf = in.v_leaf.detach().to(torch::kFloat64).requires_grad_(true);
  out.q = out.q_leaf.view({s.batch, s.queries, s.heads, s.dim}).transpose(1, 2);
  out.k = out.k_leaf.view({s.batch, s.keys, s.kv_heads, s.dim}).transpose(1, 2);
  out.v = out.v_leaf.view({s.batch, s.keys, s.kv_heads, s.dim}).transpose(1, 2);
  return out;
}

// Checks the kernel's output and gradients against the float64 definition
// for one shape and mask (`attend`: what the mask or causal flag means).
void check_against_definition(const Shape& s, const torch::Tensor& mask, bool causal,
                              const torch::Tensor& attend) {
  Inputs in = make_inputs(s, torch::kFloat32);
  Inputs ref = in_float64(in, s);
  std::optional<torch::Tensor> out = short_row_attention(in.q, in.k, in.v, mask, causal);
  ASSERT_TRUE(out.has_value()) << "the kernel did not take the call";
  torch::Tensor want = attention_by_definition(ref.q, ref.k, ref.v, attend);
  EXPECT_LT(largest_difference(*out, want), 2e-6);
  // A strided incoming gradient, as the output projection's backward gives.
  torch::Tensor d_out = torch::randn({s.batch, s.queries, s.heads, s.dim}).transpose(1, 2);
  out->backward(d_out);
  want.backward(d_out.to(torch::kFloat64));
  EXPECT_LT(largest_difference(in.q_leaf.grad(), ref.q_leaf.grad()), 1e-5) << "dq";
  EXPECT_LT(largest_difference(in.k_leaf.grad(), ref.k_leaf.grad()), 1e-5) << "dk";
  EXPECT_LT(largest_difference(in.v_leaf.grad(), ref.v_leaf.grad()), 1e-5) << "dv";
}

TEST(ShortAttention, OutputAndGradientsEqualTheDefinitionWithPaddingAndGroups) {
  torch::manual_seed(5);
  // Key counts up to the kernel's limit.
  for (int64_t keys : {int64_t{1}, int64_t{2}, int64_t{5}, int64_t{11}, kShortAttentionMaxKeys}) {
    for (int64_t dim : {int64_t{8}, int64_t{32}, int64_t{64}}) {
      SCOPED_TRACE("keys " + std::to_string(keys) + ", D " + std::to_string(dim));
      const Shape s{3, 4, 2, keys, keys, dim};
      torch::Tensor key_mask = torch::ones({s.batch, keys}, torch::kInt64);
      key_mask[0].narrow(0, 0, keys / 2).zero_();  // left padding in row 0
      key_mask[2].narrow(0, 0, keys - 1).zero_();  // one real token in row 2
      torch::Tensor mask = causal_padding_mask(key_mask, keys);
      check_against_definition(s, mask, /*causal=*/true, mask);
      check_against_definition(s, torch::Tensor(), /*causal=*/true,
                               torch::ones({keys, keys}, torch::kBool).tril());
    }
  }
}

TEST(ShortAttention, TheLastQueriesAndOneDecodingQueryFollowTheirMaskRows) {
  torch::manual_seed(6);
  const int64_t keys = 13;
  torch::Tensor key_mask = torch::ones({2, keys}, torch::kInt64);
  key_mask[1].narrow(0, 0, 4).zero_();
  // The last 6 positions' queries (the mask's last rows, a strided view).
  torch::Tensor last_rows = causal_padding_mask(key_mask, keys).narrow(2, keys - 6, 6);  // [2, 1, 6, 13]
  check_against_definition({2, 6, 3, 6, keys, 16}, last_rows, /*causal=*/false, last_rows);
  // A decoding step: one query over every cached key but the padding.
  torch::Tensor decoding = causal_padding_mask(key_mask, 1);
  check_against_definition({2, 6, 3, 1, keys, 16}, decoding, /*causal=*/false, decoding);
  // No mask and not causal: every key.
  check_against_definition({2, 2, 1, 3, keys, 16}, torch::Tensor(), false,
                           torch::ones({3, keys}, torch::kBool));
}

TEST(ShortAttention, WithoutAutogradTheForwardGivesWhatTheGradPassGives) {
  torch::manual_seed(7);
  const Shape s{2, 4, 2, 9, 9, 32};
  Inputs in = make_inputs(s, torch::kFloat32);
  torch::Tensor with_grad = *short_row_attention(in.q, in.k, in.v, torch::Tensor(), true);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(
      torch::equal(*short_row_attention(in.q, in.k, in.v, torch::Tensor(), true), with_grad.detach()));
}

TEST(ShortAttention, AQueryThatMayAttendToNoKeyGivesZeroAndNoGradient) {
  const Shape s{1, 1, 1, 2, 3, 8};
  Inputs in = make_inputs(s, torch::kFloat32);
  torch::Tensor mask = torch::tensor({true, true, false, false, false, false}).view({1, 1, 2, 3});
  torch::Tensor out = *short_row_attention(in.q, in.k, in.v, mask, false);
  EXPECT_TRUE(torch::equal(out[0][0][1], torch::zeros({8})));
  out.select(2, 1).sum().backward();
  EXPECT_TRUE(torch::equal(in.q_leaf.grad(), torch::zeros_like(in.q_leaf)));
  EXPECT_TRUE(torch::equal(in.k_leaf.grad(), torch::zeros_like(in.k_leaf)));
}

TEST(ShortAttention, CallsTheKernelCannotTakeAreLeftToAten) {
  Inputs in = make_inputs({1, 2, 1, 4, 4, 8}, torch::kFloat32);
  EXPECT_FALSE(short_row_attention(in.q.to(torch::kFloat64), in.k.to(torch::kFloat64),
                                   in.v.to(torch::kFloat64), torch::Tensor(), true));
  // Causal with fewer queries than keys and no mask: SDPA's alignment.
  EXPECT_FALSE(short_row_attention(in.q.narrow(2, 0, 2), in.k, in.v, torch::Tensor(), true));
  // An additive float mask.
  EXPECT_FALSE(short_row_attention(in.q, in.k, in.v, torch::zeros({4, 4}), false));
  Inputs long_rows = make_inputs({1, 2, 1, 1, kShortAttentionMaxKeys + 1, 8}, torch::kFloat32);
  EXPECT_FALSE(short_row_attention(long_rows.q, long_rows.k, long_rows.v, torch::Tensor(), false));
  // ... and grouped_query_attention still answers those through ATen.
  torch::Tensor out = grouped_query_attention(long_rows.q, long_rows.k, long_rows.v, torch::Tensor(), false);
  torch::Tensor want = attention_by_definition(
      long_rows.q.to(torch::kFloat64), long_rows.k.to(torch::kFloat64), long_rows.v.to(torch::kFloat64),
      torch::ones({1, kShortAttentionMaxKeys + 1}, torch::kBool));
  EXPECT_LT(largest_difference(out, want), 1e-5);
}

}  // namespace
}  // namespace rlwb::workers::model
