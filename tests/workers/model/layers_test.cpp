// The equations of a decoder layer on cases small enough to check by hand:
// RMSNorm, rotary embedding, (grouped-query) attention, masks, positions,
// and causality of the whole model.
#include "workers/model/layers.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>

#include "tests/workers/model/model_test_support.h"
#include "workers/model/linear.h"
#include "workers/model/model_error.h"
#include "workers/model/transformer.h"

namespace rlwb::workers::model {
namespace {

// Sets the CPU product for a scope and restores the previous choice.
class MatmulChoice {
 public:
  explicit MatmulChoice(CpuMatmul choice) : previous_(cpu_matmul()) { set_cpu_matmul(choice); }
  ~MatmulChoice() { set_cpu_matmul(previous_); }

 private:
  CpuMatmul previous_;
};

void expect_close(const torch::Tensor& got, const torch::Tensor& want, double tol = 1e-5) {
  ASSERT_EQ(got.sizes(), want.sizes());
  EXPECT_TRUE(torch::allclose(got, want, /*rtol=*/0, /*atol=*/tol)) << "got\n" << got << "\nwant\n" << want;
}

TEST(RmsNorm, DividesByRootMeanSquareAndScalesByWeight) {
  // x = [3, 4]: rms = sqrt((9 + 16) / 2) = 3.5355339
  torch::Tensor y = rms_norm(torch::tensor({3.0f, 4.0f}), torch::tensor({1.0f, 2.0f}), 0.0);
  expect_close(y, torch::tensor({3.0f / 3.5355339f, 8.0f / 3.5355339f}));
}

TEST(RmsNorm, EpsilonIsAddedUnderTheRoot) {
  // x = [1, 1]: mean square 1, eps 3 -> divide by 2
  torch::Tensor y = rms_norm(torch::tensor({1.0f, 1.0f}), torch::ones({2}), 3.0);
  expect_close(y, torch::tensor({0.5f, 0.5f}));
}

TEST(RmsNorm, GradientsEqualAutogradThroughTheDefinition) {
  torch::manual_seed(7);
  torch::Tensor x = torch::randn({3, 5, 8}).requires_grad_();
  torch::Tensor w = (torch::rand({8}) + 0.5).requires_grad_();
  torch::Tensor dy = torch::randn({3, 5, 8});
  torch::Tensor y = rms_norm(x, w, 1e-5);
  auto got = torch::autograd::grad({y}, {x, w}, {dy});
  // The definition in float64, differentiated op by op.
  torch::Tensor x64 = x.detach().to(torch::kFloat64).requires_grad_();
  torch::Tensor w64 = w.detach().to(torch::kFloat64).requires_grad_();
  torch::Tensor want_y = w64 * x64 / (x64.pow(2).mean(-1, true) + 1e-5).sqrt();
  auto want = torch::autograd::grad({want_y}, {x64, w64}, {dy.to(torch::kFloat64)});
  expect_close(y.detach(), want_y.detach().to(torch::kFloat32), 1e-5);
  expect_close(got[0], want[0].to(torch::kFloat32), 1e-5);
  expect_close(got[1], want[1].to(torch::kFloat32), 1e-4);
}

// The one-pass kernel (rms_norm_kernel.h) across row widths that exercise
// its whole vectors, its tail and both together, and enough rows that the
// backward splits them into chunks whose weight-gradient sums are added.
TEST(RmsNorm, KernelForwardAndGradientsEqualTheDefinitionAtEveryWidth) {
  torch::manual_seed(11);
  for (int64_t dim : {1, 7, 16, 17, 32, 45, 256}) {
    const int64_t rows = dim >= 32 ? 3000 : 40;  // 3000 rows: more than one chunk at width 32+
    torch::Tensor x = (torch::randn({rows, dim}) * 2).requires_grad_();
    torch::Tensor w = (torch::rand({dim}) + 0.5).requires_grad_();
    torch::Tensor dy = torch::randn({rows, dim});
    torch::Tensor y = rms_norm(x, w, 1e-6);
    auto got = torch::autograd::grad({y}, {x, w}, {dy});
    torch::Tensor x64 = x.detach().to(torch::kFloat64).requires_grad_();
    torch::Tensor w64 = w.detach().to(torch::kFloat64).requires_grad_();
    torch::Tensor want_y = w64 * x64 / (x64.pow(2).mean(-1, true) + 1e-6).sqrt();
    auto want = torch::autograd::grad({want_y}, {x64, w64}, {dy.to(torch::kFloat64)});
    SCOPED_TRACE("dim " + std::to_string(dim));
    expect_close(y.detach(), want_y.detach().to(torch::kFloat32), 2e-5);
    expect_close(got[0], want[0].to(torch::kFloat32), 2e-5);
    // dw sums `rows` products: its float32 error grows with the row count.
    EXPECT_TRUE(torch::allclose(got[1], want[1].to(torch::kFloat32), 1e-5, 1e-3))
        << (got[1] - want[1].to(torch::kFloat32)).abs().max().item<double>();
    // Without autograd, the same kernel's forward.
    torch::NoGradGuard no_grad;
    expect_close(rms_norm(x.detach(), w.detach(), 1e-6), y.detach(), 0.0);
  }
}

// A strided input with autograd (the kernel reads its values, and the
// gradient comes back in the input's shape), and a weight without a
// gradient (frozen), against the definition.
TEST(RmsNorm, StridedInputAndFrozenWeightGiveTheDefinitionsGradient) {
  torch::manual_seed(5);
  torch::Tensor base = torch::randn({40, 6}).requires_grad_();
  torch::Tensor x = base.t();  // [6, 40], rows 40 apart in memory
  torch::Tensor w = torch::rand({40}) + 0.5;
  torch::Tensor dy = torch::randn({6, 40});
  auto got = torch::autograd::grad({rms_norm(x, w, 1e-5)}, {base}, {dy});
  torch::Tensor b64 = base.detach().to(torch::kFloat64).requires_grad_();
  torch::Tensor x64 = b64.t();
  torch::Tensor want_y = w.to(torch::kFloat64) * x64 / (x64.pow(2).mean(-1, true) + 1e-5).sqrt();
  auto want = torch::autograd::grad({want_y}, {b64}, {dy.to(torch::kFloat64)});
  expect_close(got[0], want[0].to(torch::kFloat32), 2e-5);
}

TEST(RmsNorm, WithoutAutogradOnCpuEqualsATensRmsNorm) {
  torch::manual_seed(3);
  for (auto sizes : std::vector<std::vector<int64_t>>{{5, 1, 128}, {2, 7, 48}, {3}, {0, 16}}) {
    torch::Tensor x = torch::randn(sizes) * 3, w = torch::randn({sizes.back()});
    torch::Tensor expected = at::rms_norm(x, {sizes.back()}, w, 1e-6);
    c10::InferenceMode inference;  // as generation calls it
    torch::Tensor y = rms_norm(x, w, 1e-6);
    EXPECT_EQ(y.sizes(), x.sizes());
    EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-6)) << (y - expected).abs().max().item<double>();
  }
  // A strided input (a transposed view) is read as its values, not its memory.
  torch::Tensor x = torch::randn({16, 4}).t(), w = torch::randn({16});
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::allclose(rms_norm(x, w, 1e-6), at::rms_norm(x.contiguous(), {16}, w, 1e-6), 1e-5, 1e-6));
}

TEST(RmsNorm, ComputesInFloat32AndReturnsTheInputDtype) {
  torch::Tensor x = torch::tensor({300.0f, 400.0f}).to(torch::kBFloat16);
  torch::Tensor y = rms_norm(x, torch::ones({2}, torch::kBFloat16), 1e-6);
  EXPECT_EQ(y.scalar_type(), torch::kBFloat16);
  expect_close(y.to(torch::kFloat32), torch::tensor({0.8485f, 1.1314f}), 1e-2);
}

TransformerConfig rope_config(int64_t head_dim, double theta) {
  TransformerConfig c = testing::tiny_config();
  c.num_heads = 1;
  c.num_kv_heads = 1;
  c.hidden_size = head_dim;
  c.rope_theta = theta;
  return c;
}

// swiglu's one-pass kernel (swiglu_kernel.h) against silu(g) * u computed
// in float64 by autograd, values and both gradients, over the whole range
// of exp (its clamps included) and on the packed product's two halves.
TEST(Swiglu, OnePassKernelAndItsGradientsEqualSiluTimesUp) {
  torch::Tensor edges =
      torch::tensor({-200.0f, -88.5f, -87.0f, -30.0f, -1e-3f, 0.0f, 1e-3f, 0.5f, 30.0f, 88.5f, 200.0f});
  torch::Tensor gate_values = torch::cat({edges, torch::randn({3 * 37 - edges.numel()}) * 4}).view({3, 37});
  torch::Tensor packed = torch::cat({gate_values, torch::randn({3, 37})}, -1).view({3, 1, 74});
  packed.requires_grad_(true);
  torch::Tensor gate = packed.narrow(-1, 0, 37), up = packed.narrow(-1, 37, 37);  // rows 74 floats apart
  torch::Tensor y = swiglu(gate, up);
  torch::Tensor reference = packed.detach().to(torch::kFloat64).requires_grad_(true);
  torch::Tensor rg = reference.narrow(-1, 0, 37), ru = reference.narrow(-1, 37, 37);
  torch::Tensor want = torch::silu(rg) * ru;
  const auto tolerance = [](const torch::Tensor& w) { return 1e-6 * (1 + w.abs()); };
  EXPECT_TRUE(((y.to(torch::kFloat64) - want).abs() <= tolerance(want)).all().item<bool>()) << "got\n"
                                                                                            << y << "\nwant\n"
                                                                                            << want;
  torch::Tensor dy = torch::randn({3, 1, 37});
  y.backward(dy);
  want.backward(dy.to(torch::kFloat64));
  // 1 - sigmoid(g) loses bits in float32 for large g (as in ATen's
  // silu_backward), hence 1e-5 for the gradients.
  torch::Tensor got_grad = packed.grad().to(torch::kFloat64), want_grad = reference.grad();
  EXPECT_TRUE(((got_grad - want_grad).abs() <= 10 * tolerance(want_grad)).all().item<bool>())
      << "got\n"
      << got_grad << "\nwant\n"
      << want_grad;
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(swiglu(gate, up), y.detach()))
      << "the no-grad pass computes what the grad pass does";
}

TEST(Swiglu, OtherDtypesGoThroughAtensSilu) {
  torch::Tensor g = torch::randn({4, 6}, torch::kFloat64), u = torch::randn({4, 6}, torch::kFloat64);
  EXPECT_TRUE(torch::equal(swiglu(g, u), torch::silu(g) * u));
}

TEST(Rope, InverseFrequenciesArePowersOfTheta) {
  // D = 4, theta = 100: theta^(-0/4) = 1, theta^(-2/4) = 0.1
  expect_close(rope_inverse_frequencies(rope_config(4, 100.0)), torch::tensor({1.0f, 0.1f}));
}

TEST(Rope, RotatesPairsIAndIPlusHalfByPositionTimesFrequency) {
  RopeTables t = rope_tables(rope_config(4, 100.0), 3);
  // position 2: angles [2, 0.2] for pairs (0, 2) and (1, 3)
  torch::Tensor cos = t.cos[2].view({1, 1, 1, 4}), sin = t.sin[2].view({1, 1, 1, 4});
  torch::Tensor e0 = torch::tensor({1.0f, 0.0f, 0.0f, 0.0f}).view({1, 1, 1, 4});
  torch::Tensor e1 = torch::tensor({0.0f, 1.0f, 0.0f, 0.0f}).view({1, 1, 1, 4});
  expect_close(apply_rope(e0, cos, sin).flatten(),
               torch::tensor({std::cos(2.0f), 0.0f, std::sin(2.0f), 0.0f}));
  expect_close(apply_rope(e1, cos, sin).flatten(),
               torch::tensor({0.0f, std::cos(0.2f), 0.0f, std::sin(0.2f)}));
}

TEST(Rope, EqualsTheRotateHalfFormulaWithPlainSines) {
  // HF: x * cos + rotate_half(x) * sin, rotate_half([x1, x2]) = [-x2, x1]
  RopeTables t = rope_tables(rope_config(8, 10000.0), 7);
  torch::Tensor angles =
      torch::outer(torch::arange(7).to(torch::kFloat32), rope_inverse_frequencies(rope_config(8, 10000.0)));
  torch::Tensor emb = torch::cat({angles, angles}, -1);
  torch::Tensor x = torch::randn({2, 3, 7, 8});
  torch::Tensor rotated = torch::cat({-x.narrow(-1, 4, 4), x.narrow(-1, 0, 4)}, -1);
  expect_close(apply_rope(x, t.cos.view({1, 1, 7, 8}), t.sin.view({1, 1, 7, 8})),
               x * emb.cos() + rotated * emb.sin());
}

TEST(Rope, PositionZeroIsTheIdentity) {
  RopeTables t = rope_tables(rope_config(8, 10000.0), 1);
  torch::Tensor x = torch::randn({1, 1, 1, 8});
  expect_close(apply_rope(x, t.cos[0].view({1, 1, 1, 8}), t.sin[0].view({1, 1, 1, 8})), x);
}

TEST(Rope, DotProductDependsOnlyOnRelativePosition) {
  RopeTables t = rope_tables(rope_config(8, 10000.0), 20);
  torch::Tensor q = torch::randn({1, 1, 1, 8}), k = torch::randn({1, 1, 1, 8});
  auto at = [&](const torch::Tensor& x, int p) {
    return apply_rope(x, t.cos[p].view({1, 1, 1, 8}), t.sin[p].view({1, 1, 1, 8}));
  };
  const float near = (at(q, 5) * at(k, 3)).sum().item<float>();
  const float far = (at(q, 17) * at(k, 15)).sum().item<float>();
  EXPECT_NEAR(near, far, 1e-4);
}

// apply_rope's one-pass kernel (rope_kernel.h) against the definition it
// replaces, x cos + roll(x, D/2) sin, computed in float64 by autograd:
// values and the gradient of x, on the layouts the model passes -- q as a
// transposed view of a projection [B, T, H * D], per-row tables [B, 1, T, D]
// narrowed to the last positions, and one table shared by the batch.
TEST(Rope, OnePassKernelAndItsGradientEqualTheRollFormula) {
  for (int64_t dim : {8, 32, 64}) {
    const int64_t batch = 3, heads = 5, len = 7, from = 2, queries = len - from;
    TransformerConfig config = rope_config(dim, 10000.0);
    RopeTables t = rope_tables(config, 16);
    torch::Tensor positions = torch::randint(0, 16, {batch, len}, torch::kInt64);
    torch::Tensor cos = t.cos.index_select(0, positions.flatten()).view({batch, 1, len, dim});
    torch::Tensor sin = t.sin.index_select(0, positions.flatten()).view({batch, 1, len, dim});
    struct Case {
      const char* name;
      torch::Tensor cos, sin;
    };
    const Case cases[] = {
        {"per-row tables, last positions", cos.narrow(2, from, queries), sin.narrow(2, from, queries)},
        {"one table for the batch", t.cos.narrow(0, 3, queries).view({1, 1, queries, dim}),
         t.sin.narrow(0, 3, queries).view({1, 1, queries, dim})}};
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + ", D = " + std::to_string(dim));
      torch::Tensor projection = torch::randn({batch, queries, heads * dim}, torch::requires_grad());
      torch::Tensor x = projection.view({batch, queries, heads, dim}).transpose(1, 2);  // strided, as q
      torch::Tensor y = apply_rope(x, c.cos, c.sin);
      torch::Tensor reference_leaf = projection.detach().to(torch::kFloat64).requires_grad_(true);
      torch::Tensor rx = reference_leaf.view({batch, queries, heads, dim}).transpose(1, 2);
      torch::Tensor want = rx * c.cos.to(torch::kFloat64) + rx.roll(dim / 2, -1) * c.sin.to(torch::kFloat64);
      expect_close(y.to(torch::kFloat64), want, 1e-6);
      // A gradient that is itself strided (as attention's backward hands it over).
      torch::Tensor dy = torch::randn({batch, queries, heads, dim}).transpose(1, 2);
      y.backward(dy);
      want.backward(dy.to(torch::kFloat64));
      expect_close(projection.grad().to(torch::kFloat64), reference_leaf.grad(), 1e-6);
    }
  }
}

TEST(Rope, WithoutAutogradTheKernelGivesWhatTheGradPassGives) {
  RopeTables t = rope_tables(rope_config(16, 10000.0), 9);
  torch::Tensor cos = t.cos.view({1, 1, 9, 16}), sin = t.sin.view({1, 1, 9, 16});
  torch::Tensor x = torch::randn({2, 3, 9, 16});
  torch::Tensor with_grad = apply_rope(x.clone().requires_grad_(true), cos, sin);
  torch::NoGradGuard no_grad;
  EXPECT_TRUE(torch::equal(apply_rope(x, cos, sin), with_grad.detach()));
}

TEST(Rope, Llama3ScalingKeepsHighFrequenciesAndSlowsLowOnesByFactor) {
  TransformerConfig c = rope_config(128, 500000.0);
  c.rope_scaling = {"llama3", 8.0, 1.0, 4.0, 8192};
  torch::Tensor plain = rope_inverse_frequencies(rope_config(128, 500000.0));
  torch::Tensor scaled = rope_inverse_frequencies(c);
  EXPECT_FLOAT_EQ(scaled[0].item<float>(), plain[0].item<float>());           // wavelength 2pi
  EXPECT_FLOAT_EQ(scaled[63].item<float>(), plain[63].item<float>() / 8.0f);  // wavelength >> 8192
}

TEST(Attention, HandComputedSoftmaxOfScaledScores) {
  // q = [1, 0]; keys [1, 0] and [0, 1]; scores [1/sqrt(2), 0]
  torch::Tensor q = torch::tensor({1.0f, 0.0f}).view({1, 1, 1, 2});
  torch::Tensor k = torch::tensor({1.0f, 0.0f, 0.0f, 1.0f}).view({1, 1, 2, 2});
  torch::Tensor v = torch::tensor({1.0f, 2.0f, 3.0f, 4.0f}).view({1, 1, 2, 2});
  const double w0 = std::exp(1 / std::sqrt(2.0)) / (std::exp(1 / std::sqrt(2.0)) + 1);  // 0.66976
  torch::Tensor want =
      torch::tensor({static_cast<float>(w0 * 1 + (1 - w0) * 3), static_cast<float>(w0 * 2 + (1 - w0) * 4)});
  expect_close(grouped_query_attention(q, k, v, torch::Tensor(), false).flatten(), want);
}

TEST(Attention, EqualScoresAverageTheValues) {
  torch::Tensor q = torch::zeros({1, 1, 1, 2});
  torch::Tensor k = torch::randn({1, 1, 3, 2});
  torch::Tensor v = torch::tensor({1.0f, 0.0f, 2.0f, 3.0f, 6.0f, 3.0f}).view({1, 1, 3, 2});
  expect_close(grouped_query_attention(q, k, v, torch::Tensor(), false).flatten(),
               torch::tensor({3.0f, 2.0f}));
}

TEST(Attention, CausalFirstQuerySeesOnlyTheFirstKey) {
  torch::Tensor q = torch::randn({1, 1, 3, 4}), k = torch::randn({1, 1, 3, 4}),
                v = torch::randn({1, 1, 3, 4});
  torch::Tensor out = grouped_query_attention(q, k, v, torch::Tensor(), true);
  expect_close(out[0][0][0], v[0][0][0]);
}

TEST(Attention, QueryHeadsShareKeyValueHeadsInGroupsInOrder) {
  // H = 4, Hkv = 2: heads 0,1 use kv head 0; heads 2,3 use kv head 1.
  torch::Tensor q = torch::randn({2, 4, 3, 8}), k = torch::randn({2, 2, 5, 8}),
                v = torch::randn({2, 2, 5, 8});
  torch::Tensor out = grouped_query_attention(q, k, v, torch::Tensor(), false);
  for (int h = 0; h < 4; ++h) {
    torch::Tensor kh = k.select(1, h / 2), vh = v.select(1, h / 2), qh = q.select(1, h);
    torch::Tensor weights = (torch::matmul(qh, kh.transpose(-1, -2)) / std::sqrt(8.0)).softmax(-1);
    expect_close(out.select(1, h), torch::matmul(weights, vh));
  }
}

// softmax(q k^T / sqrt(D) + where(attend, 0, -inf)) v, one query head per
// key/value head, written out with plain tensor ops.
torch::Tensor attention_by_definition(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                      const torch::Tensor& attend) {
  torch::Tensor scores = torch::matmul(q, k.transpose(-1, -2)) / std::sqrt(static_cast<double>(q.size(-1)));
  scores = scores.masked_fill(attend.logical_not(), -std::numeric_limits<float>::infinity());
  return torch::matmul(scores.softmax(-1), v);
}

TEST(Attention, ShortAndLongKeyRowsFollowTheDefinition) {
  // Fewer than kMinCpuAttentionKeys keys take the padded path, more do not;
  // both must equal the definition, with a mask, causal, and one query.
  torch::manual_seed(11);
  for (int64_t keys : {int64_t{3}, int64_t{12}, kMinCpuAttentionKeys, int64_t{21}}) {
    torch::Tensor q = torch::randn({2, 2, keys, 8}), k = torch::randn({2, 2, keys, 8}),
                  v = torch::randn({2, 2, keys, 8});
    torch::Tensor key_mask = torch::ones({2, keys}, torch::kInt64);
    key_mask[0].narrow(0, 0, keys / 2).zero_();  // left padding in row 0
    torch::Tensor mask = causal_padding_mask(key_mask, keys);
    expect_close(grouped_query_attention(q, k, v, mask, true), attention_by_definition(q, k, v, mask), 1e-5);
    torch::Tensor causal = torch::ones({keys, keys}, torch::kBool).tril();
    expect_close(grouped_query_attention(q, k, v, torch::Tensor(), true),
                 attention_by_definition(q, k, v, causal), 1e-5);
    torch::Tensor last = q.narrow(2, keys - 1, 1);  // a decoding step: one query sees every key
    expect_close(grouped_query_attention(last, k, v, torch::Tensor(), false),
                 attention_by_definition(last, k, v, torch::ones({1, keys}, torch::kBool)), 1e-5);
  }
}

TEST(Attention, MaskedKeysGetNoWeight) {
  torch::Tensor q = torch::randn({1, 1, 1, 4}), k = torch::randn({1, 1, 3, 4}),
                v = torch::randn({1, 1, 3, 4});
  torch::Tensor mask = torch::tensor({false, true, false}).view({1, 1, 1, 3});
  expect_close(grouped_query_attention(q, k, v, mask, false).flatten(), v[0][0][1]);
}

TEST(Masks, CausalPaddingMaskHidesFutureAndPaddingButNotSelf) {
  torch::Tensor m = causal_padding_mask(torch::tensor({{0, 1, 1}}), 3);
  torch::Tensor want = torch::tensor({{true, false, false},  // padding query: itself only
                                      {false, true, false},
                                      {false, true, true}})
                           .view({1, 1, 3, 3});
  EXPECT_TRUE(torch::equal(m, want)) << m;
}

TEST(Masks, DecodingQuerySeesAllRealCachedKeys) {
  torch::Tensor m = causal_padding_mask(torch::tensor({{0, 1, 1, 1}}), 1);
  EXPECT_TRUE(torch::equal(m, torch::tensor({false, true, true, true}).view({1, 1, 1, 4})));
}

TEST(Masks, PositionIdsCountRealTokensBefore) {
  torch::Tensor p = position_ids_from_mask(torch::tensor({{0, 0, 1, 1, 1}, {1, 1, 1, 1, 1}}));
  EXPECT_TRUE(torch::equal(p, torch::tensor({{0, 0, 0, 1, 2}, {0, 1, 2, 3, 4}})));
}

TEST(TransformerModel, LogitsAtAPositionIgnoreLaterTokens) {
  torch::manual_seed(3);
  Transformer model(testing::tiny_config());
  torch::NoGradGuard no_grad;
  torch::Tensor a = torch::tensor({{5, 9, 11, 2, 7}});
  torch::Tensor b = a.clone();
  b[0][4] = 40;
  torch::Tensor la = model->forward(a, torch::Tensor()), lb = model->forward(b, torch::Tensor());
  expect_close(la.narrow(1, 0, 4), lb.narrow(1, 0, 4));
  EXPECT_GT((la[0][4] - lb[0][4]).abs().max().item<float>(), 1e-3);
}

TEST(TransformerModel, LeftPaddingDoesNotChangeRealPositions) {
  torch::manual_seed(4);
  Transformer model(testing::tiny_config(Architecture::kQwen2));
  torch::NoGradGuard no_grad;
  torch::Tensor plain = model->forward(torch::tensor({{5, 9, 11}}), torch::Tensor());
  torch::Tensor padded = model->forward(torch::tensor({{0, 0, 5, 9, 11}}), torch::tensor({{0, 0, 1, 1, 1}}));
  EXPECT_FALSE(padded.isnan().any().item<bool>());
  expect_close(padded.narrow(1, 2, 3), plain, 1e-5);
}

TEST(TransformerModel, NoGradPassWithFusedProjectionsEqualsTheAutogradPass) {
  torch::manual_seed(5);
  Transformer model(testing::tiny_config(Architecture::kQwen2));
  torch::Tensor ids = torch::tensor({{0, 5, 9, 11, 3}, {7, 8, 9, 10, 11}});
  torch::Tensor mask = torch::tensor({{0, 1, 1, 1, 1}, {1, 1, 1, 1, 1}});
  torch::Tensor with_grad = model->forward(ids, mask).detach();
  torch::NoGradGuard no_grad;
  expect_close(model->forward(ids, mask), with_grad, 1e-5);
  // An in-place update of a weight is seen by the next no-grad pass.
  model->layers[0]->as<TransformerBlock>()->wk->weight.mul_(2.0);
  torch::Tensor updated = model->forward(ids, mask);
  EXPECT_GT((updated - with_grad).abs().max().item<float>(), 1e-3);
  torch::GradMode::set_enabled(true);
  torch::Tensor updated_with_grad = model->forward(ids, mask).detach();
  torch::GradMode::set_enabled(false);
  expect_close(updated, updated_with_grad, 1e-5);
}

TEST(TransformerModel, AskingForTheLastPositionsOnlyGivesTheSameStatesAndGradients) {
  torch::manual_seed(6);
  Transformer model(testing::tiny_config(Architecture::kQwen2));
  const int64_t from = 3;
  for (bool padded : {false, true}) {
    SCOPED_TRACE(padded ? "left-padded rows" : "no padding (causal flag path)");
    torch::Tensor ids = torch::tensor({{0, 5, 9, 11, 3, 4}, {7, 8, 9, 10, 11, 12}});
    torch::Tensor mask =
        padded ? torch::tensor({{0, 1, 1, 1, 1, 1}, {1, 1, 1, 1, 1, 1}}) : torch::ones_like(ids);
    torch::Tensor positions = position_ids_from_mask(mask);
    torch::Tensor key_mask = padded ? mask : torch::Tensor();
    // The weights' gradients of a loss over the last positions: the full
    // pass and the shortened one must agree.
    auto grads_of = [&](const torch::Tensor& states) {
      model->zero_grad();
      (states * states).sum().backward();
      std::vector<torch::Tensor> g;
      for (auto& p : model->parameters())
        g.push_back(p.grad().defined() ? p.grad().clone() : torch::zeros_like(p));
      return g;
    };
    torch::Tensor full = model->hidden_states(ids, positions, key_mask).narrow(1, from, ids.size(1) - from);
    auto full_grads = grads_of(full);
    torch::Tensor last = model->hidden_states(ids, positions, key_mask, nullptr, from);
    ASSERT_EQ(last.sizes(), full.sizes());
    expect_close(last, full.detach(), 1e-5);
    auto last_grads = grads_of(last);
    for (size_t i = 0; i < full_grads.size(); ++i) expect_close(last_grads[i], full_grads[i], 1e-4);
    torch::NoGradGuard no_grad;  // the fused no-grad path too
    expect_close(model->hidden_states(ids, positions, key_mask, nullptr, from), full.detach(), 1e-5);
  }
  EXPECT_THROW(
      model->hidden_states(torch::tensor({{5, 9}}), torch::tensor({{0, 1}}), torch::Tensor(), nullptr, 2),
      ModelError);
}

TEST(PackedLinear, EqualsTheDenseProductOfTheConcatenatedWeightsAndSeesInPlaceUpdates) {
  torch::manual_seed(3);
  torch::Tensor wa = torch::randn({6, 16}), wb = torch::randn({3, 16});
  torch::Tensor ba = torch::randn({6}), bb = torch::randn({3});
  torch::NoGradGuard no_grad;
  for (CpuMatmul backend : {CpuMatmul::kOneDnn, CpuMatmul::kDense}) {
    SCOPED_TRACE(backend == CpuMatmul::kOneDnn ? "oneDNN" : "dense sgemm");
    MatmulChoice choice(backend);
    PackedLinear packed;
    EXPECT_EQ(uses_onednn(wa, /*packed_weight=*/true),
              backend == CpuMatmul::kOneDnn && AT_MKLDNN_ENABLED() != 0);
    auto check_calls = [&](int calls) {  // before and after the copy is packed
      const std::vector<std::vector<int64_t>> shapes = {{1, 16}, {5, 16}, {2, 7, 16}, {300, 16}};
      for (int i = 0; i < calls; ++i) {
        torch::Tensor x = torch::randn(shapes[i % shapes.size()]);
        expect_close(packed(x, {wa, wb}, {ba, bb}),
                     torch::nn::functional::linear(x, torch::cat({wa, wb}), torch::cat({ba, bb})), 1e-4);
      }
    };
    check_calls(12);
    wb.mul_(2.0);  // an optimizer step writes in place: the next call uses the new weights
    check_calls(12);
    torch::Tensor x = torch::randn({4, 16});
    PackedLinear no_bias;
    for (int i = 0; i < 10; ++i)
      expect_close(no_bias(x, {wa}, {torch::Tensor()}), torch::nn::functional::linear(x, wa), 1e-4);
    torch::Tensor half = x.to(torch::kBFloat16);  // not for oneDNN here: the dense product
    PackedLinear bf16;
    expect_close(bf16(half, {wa.to(torch::kBFloat16)}, {torch::Tensor()}).to(torch::kFloat32),
                 torch::nn::functional::linear(half, wa.to(torch::kBFloat16)).to(torch::kFloat32), 1e-2);
  }
}

TEST(Linear, ValueAndGradientsEqualTorchLinear) {
  torch::manual_seed(4);
  for (CpuMatmul backend : {CpuMatmul::kOneDnn, CpuMatmul::kDense}) {
    SCOPED_TRACE(backend == CpuMatmul::kOneDnn ? "oneDNN" : "dense sgemm");
    MatmulChoice choice(backend);
    for (bool with_bias : {true, false}) {
      torch::Tensor x = torch::randn({3, 5, 16}, torch::requires_grad());
      torch::Tensor w = torch::randn({8, 16}, torch::requires_grad());
      torch::Tensor b = with_bias ? torch::randn({8}, torch::requires_grad()) : torch::Tensor();
      torch::Tensor up = torch::randn({3, 5, 8});  // a weighting so every output matters differently
      torch::Tensor y = linear(x, w, b);
      (y * up).sum().backward();
      std::vector<torch::Tensor> ours = {y.detach(), x.grad().clone(), w.grad().clone()};
      if (with_bias) ours.push_back(b.grad().clone());
      x.mutable_grad().reset(), w.mutable_grad().reset();
      if (with_bias) b.mutable_grad().reset();
      torch::Tensor ref = torch::nn::functional::linear(x, w, b);
      (ref * up).sum().backward();
      std::vector<torch::Tensor> want = {ref.detach(), x.grad(), w.grad()};
      if (with_bias) want.push_back(b.grad());
      for (size_t i = 0; i < want.size(); ++i) expect_close(ours[i], want[i], 1e-4);
    }
    // A frozen weight gets no gradient; the input still does.
    torch::Tensor x = torch::randn({4, 16}, torch::requires_grad());
    torch::Tensor frozen = torch::randn({8, 16});
    linear(x, frozen, torch::Tensor()).sum().backward();
    EXPECT_FALSE(frozen.grad().defined());
    expect_close(x.grad(), frozen.sum(0).expand({4, 16}), 1e-4);
  }
}

TEST(Linear, TheCpuProductIsChosenByName) {
  EXPECT_EQ(cpu_matmul_from("dense"), CpuMatmul::kDense);
  EXPECT_EQ(cpu_matmul_from("onednn"), CpuMatmul::kOneDnn);
  EXPECT_EQ(cpu_matmul_from("auto"), CpuMatmul::kAuto);
  EXPECT_EQ(cpu_matmul_from(""), CpuMatmul::kAuto);
  try {
    cpu_matmul_from("fast");
    ADD_FAILURE() << "an unknown RLWB_CPU_MATMUL value was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("RLWB_CPU_MATMUL=fast: write dense, onednn or auto"),
              std::string::npos)
        << e.what();
  }
  {
    MatmulChoice dense(CpuMatmul::kDense);
    EXPECT_FALSE(uses_onednn(torch::ones({2})));
    EXPECT_FALSE(uses_onednn(torch::ones({2}), /*packed_weight=*/true));
  }
  {
    MatmulChoice onednn(CpuMatmul::kOneDnn);
    EXPECT_EQ(uses_onednn(torch::ones({2})), AT_MKLDNN_ENABLED() != 0);
    EXPECT_FALSE(uses_onednn(torch::ones({2}, torch::kBFloat16), /*packed_weight=*/true));
  }
}

TEST(Linear, TheAutomaticProductFollowsWhatWasMeasuredOnEachKindOfCpu) {
  const CpuTraits intel_avx512{.intel = true, .avx512 = true}, amd_avx512{.intel = false, .avx512 = true},
      amd_avx2{.intel = false, .avx512 = false};
  for (bool packed : {false, true}) {
    for (int threads : {1, 2}) {
      SCOPED_TRACE("packed " + std::to_string(packed) + ", threads " + std::to_string(threads));
      EXPECT_FALSE(onednn_by_default(intel_avx512, packed, threads)) << "MKL's sgemm is faster on Intel";
      EXPECT_TRUE(onednn_by_default(amd_avx512, packed, threads)) << "MKL runs no AVX-512 off Intel";
      EXPECT_EQ(onednn_by_default(amd_avx2, packed, threads), packed && threads > 1);
    }
  }
  MatmulChoice automatic(CpuMatmul::kAuto);
  EXPECT_EQ(uses_onednn(torch::ones({2})),
            AT_MKLDNN_ENABLED() != 0 && onednn_by_default(this_cpu(), false, at::get_num_threads()));
}

// The one-pass kernels inside the whole model: a float32 Transformer (RoPE
// and SwiGLU through rope_kernel and swiglu_kernel) against a float64 copy
// of it (ATen's roll, addcmul, silu and mul): logits and every parameter's
// gradient after one backward, with a left-padded row, for the training
// pass (autograd) and the pass without autograd.
TEST(TransformerModel, Float32PassWithOnePassKernelsEqualsAtensOpsInFloat64) {
  torch::manual_seed(5);
  Transformer model(testing::tiny_config());
  Transformer wide(testing::tiny_config());
  {
    torch::NoGradGuard no_grad;
    auto from = model->named_parameters();
    for (auto& item : wide->named_parameters()) item.value().copy_(from[item.key()]);
  }
  wide->to(torch::kFloat64);
  torch::Tensor ids = torch::randint(1, 64, {3, 9}, torch::kInt64);
  torch::Tensor mask = torch::ones({3, 9}, torch::kInt64);
  mask.index_put_({0, torch::indexing::Slice(0, 3)}, 0);  // row 0 left-padded
  torch::Tensor weights = torch::randn({3, 9, 64});
  torch::Tensor logits = model->forward(ids, mask), wide_logits = wide->forward(ids, mask);
  expect_close(logits.to(torch::kFloat64), wide_logits, 1e-4);
  (logits * weights).sum().backward();
  (wide_logits * weights.to(torch::kFloat64)).sum().backward();
  auto wide_params = wide->named_parameters();
  for (auto& item : model->named_parameters()) {
    SCOPED_TRACE(item.key());
    const torch::Tensor want = wide_params[item.key()].grad();
    const double scale = 1 + want.abs().max().item<double>();
    EXPECT_LE((item.value().grad().to(torch::kFloat64) - want).abs().max().item<double>(), 1e-4 * scale);
  }
  torch::NoGradGuard no_grad;
  expect_close(model->forward(ids, mask).to(torch::kFloat64), wide_logits.detach(), 1e-4);
}

TEST(TransformerModel, TiedEmbeddingsShareOneMatrix) {
  TransformerConfig c = testing::tiny_config();
  c.tie_word_embeddings = true;
  Transformer model(c);
  EXPECT_FALSE(model->lm_head);
  torch::NoGradGuard no_grad;
  torch::Tensor h = torch::randn({1, c.hidden_size});
  expect_close(model->logits(h), torch::matmul(h, model->tok_embeddings->weight.t()));
}

TEST(TransformerModel, Qwen2HasQkvBiasButNoOutputBias) {
  Transformer model(testing::tiny_config(Architecture::kQwen2));
  auto params = model->named_parameters();
  EXPECT_TRUE(params.contains("layers.0.wq.bias"));
  EXPECT_TRUE(params.contains("layers.0.wv.bias"));
  EXPECT_FALSE(params.contains("layers.0.wo.bias"));
}

}  // namespace
}  // namespace rlwb::workers::model
