// Bit-exact tensor helpers shared by Batch and the wire codec.
//
// LibTorch implements copy, index_select, cat and equal only for the common
// dtypes; bits*, uint1..7, int1..7 and the float8/float4 types lack some of
// them. Every dtype has a same-sized integer type, so these helpers do their
// work on an integer *view* of the tensor and view the result back: the
// bytes move unchanged (NaN payloads and -0.0 included) for every dtype.
// Quantized and non-strided (sparse, mkldnn) tensors are not supported.
#pragma once

#include <torch/types.h>

#include <string>
#include <vector>

namespace rlwb::core {

// Empty when `t` can live in a Batch / on the wire; otherwise the reason
// and what to do (quantized, sparse, undefined, ...).
std::string unsupported_tensor_reason(const torch::Tensor& t);

// `t` as a same-shaped tensor of a plain type with the same element size
// (uint8/int16/int32/int64; complex128 stays itself). Lazy conj/neg views
// are resolved first, so the bits are those of the values `t` shows.
torch::Tensor bits_view(const torch::Tensor& t);

// The inverse of bits_view: `bits` reinterpreted as `dtype`.
torch::Tensor from_bits(const torch::Tensor& bits, torch::ScalarType dtype);

// A contiguous tensor with the same values and dtype; `t` itself when it is
// already contiguous (and has no lazy conj/neg bit). Works for every dtype.
torch::Tensor contiguous_bits(const torch::Tensor& t);

// Rows of `t` (along dim 0) in the order of `index`; a new tensor.
torch::Tensor take_rows(const torch::Tensor& t, const std::vector<int64_t>& index);

// Concatenation along dim 0 of tensors of one dtype.
torch::Tensor cat_rows(const std::vector<torch::Tensor>& parts);

// Same dtype, same shape and the same bytes (on any device).
bool same_bits(const torch::Tensor& a, const torch::Tensor& b);

}  // namespace rlwb::core
