// Helpers for the core/algorithms tests: small tensors from literals and
// element-wise comparisons with readable failure messages.
#pragma once

#include <gtest/gtest.h>
#include <torch/types.h>

#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

namespace rlwb::core::algorithms::test_support {

// Padding placeholder: tests fill masked positions with it (or with inf) to
// show that they are never read.
inline const double kNaN = std::numeric_limits<double>::quiet_NaN();
inline const double kInf = std::numeric_limits<double>::infinity();

// A [rows, cols] tensor from nested lists (float32 unless told).
inline torch::Tensor mat(std::initializer_list<std::initializer_list<double>> rows,
                         torch::ScalarType type = torch::kFloat32) {
  std::vector<double> flat;
  int64_t cols = rows.size() ? static_cast<int64_t>(rows.begin()->size()) : 0;
  for (const auto& r : rows) {
    EXPECT_EQ(static_cast<int64_t>(r.size()), cols) << "ragged literal";
    flat.insert(flat.end(), r.begin(), r.end());
  }
  return torch::tensor(flat, torch::kFloat64).reshape({static_cast<int64_t>(rows.size()), cols}).to(type);
}

inline torch::Tensor vec(std::initializer_list<double> v, torch::ScalarType type = torch::kFloat32) {
  return torch::tensor(std::vector<double>(v), torch::kFloat64).to(type);
}

inline torch::Tensor ids(std::initializer_list<int64_t> v) {
  return torch::tensor(std::vector<int64_t>(v), torch::kInt64);
}

// A bool mask from 0/1 literals.
inline torch::Tensor mask(std::initializer_list<std::initializer_list<double>> rows) {
  return mat(rows, torch::kFloat64).ne(0);
}

inline std::vector<double> values_of(const torch::Tensor& t) {
  torch::Tensor flat = t.detach().to(torch::kFloat64).contiguous().reshape({-1});
  return {flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel()};
}

// Every element of `actual` within `tol` of `expected` (row-major), shapes equal.
inline void expect_near(const torch::Tensor& actual, const torch::Tensor& expected, double tol = 1e-5) {
  ASSERT_EQ(actual.sizes(), expected.sizes());
  std::vector<double> a = values_of(actual), e = values_of(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NEAR(a[i], e[i], tol) << "at flat index " << i << " of shape " << actual.sizes();
  }
}

inline void expect_near(const torch::Tensor& actual, double expected, double tol = 1e-5) {
  ASSERT_EQ(actual.numel(), 1);
  EXPECT_NEAR(actual.item<double>(), expected, tol);
}

// Bitwise-equal values (NaN nowhere): for "padding never contributes".
inline void expect_same(const torch::Tensor& a, const torch::Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_TRUE(torch::isfinite(a).all().item<bool>()) << a;
  EXPECT_TRUE(torch::equal(a, b)) << a << "\nvs\n" << b;
}

// `t` with every position where `m` is false replaced by `fill`.
inline torch::Tensor fill_padding(const torch::Tensor& t, const torch::Tensor& m, double fill) {
  return torch::where(m, t, torch::full({}, fill, t.options()));
}

}  // namespace rlwb::core::algorithms::test_support
