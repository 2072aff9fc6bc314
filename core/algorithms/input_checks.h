// Input checks and padding hygiene shared by every file in core/algorithms.
// Not part of the public API: callers use the functions that use these.
//
// Why padding is replaced before any arithmetic: positions under the mask
// may hold anything (log-probs of pad tokens can be -inf or NaN). Multiplying
// by a 0/1 mask keeps NaN (NaN * 0 = NaN) and lets NaN gradients leak into
// the model; selecting with torch::where before the arithmetic does neither.
#pragma once

#include <torch/types.h>

#include <string_view>

namespace rlwb::core::algorithms::detail {

// The mask as bool (nonzero = valid), after checking that it has exactly the
// shape of `like` (named `like_name` in the error). `fn` names the caller.
torch::Tensor bool_mask(std::string_view fn, const torch::Tensor& mask, const torch::Tensor& like,
                        std::string_view like_name);

// Throws unless `t` is defined and has `dim` dimensions.
void check_dim(std::string_view fn, std::string_view name, const torch::Tensor& t, int64_t dim);

// Throws unless `a` and `b` have the same shape.
void check_same_shape(std::string_view fn, std::string_view a_name, const torch::Tensor& a,
                      std::string_view b_name, const torch::Tensor& b);

// Throws unless `t` is a 1-D tensor of `rows` entries.
void check_rows(std::string_view fn, std::string_view name, const torch::Tensor& t, int64_t rows);

// A floating tensor to compute with: float32 for integer, bool, half and
// bfloat16 inputs; float32 and float64 unchanged.
torch::Tensor floating(const torch::Tensor& t);

// floating(values) with every position where `mask` is false set to 0.
torch::Tensor zero_padding(const torch::Tensor& values, const torch::Tensor& bool_mask);

// Throws `fn: <what>` as AlgorithmError.
[[noreturn]] void fail(std::string_view fn, const std::string& what);

}  // namespace rlwb::core::algorithms::detail
