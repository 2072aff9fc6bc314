#include "core/batch/tensor_bits.h"

#include <ATen/ATen.h>

#include <algorithm>

namespace rlwb::core {

namespace {

torch::ScalarType plain_type_of_size(size_t bytes) {
  switch (bytes) {
    case 1:
      return torch::kUInt8;
    case 2:
      return torch::kInt16;
    case 4:
      return torch::kInt32;
    case 8:
      return torch::kInt64;
    default:
      return torch::kComplexDouble;  // the only 16-byte type
  }
}

}  // namespace

std::string unsupported_tensor_reason(const torch::Tensor& t) {
  if (!t.defined()) return "the tensor is undefined (default-constructed); pass a real tensor";
  if (t.layout() != torch::kStrided) {
    return "the tensor has a non-strided layout (sparse or mkldnn); call to_dense() first";
  }
  if (c10::isQIntType(t.scalar_type())) {
    return std::string("quantized dtype ") + c10::toString(t.scalar_type()) +
           " is not supported; store int_repr() and keep scale/zero point in meta";
  }
  return {};
}

torch::Tensor bits_view(const torch::Tensor& t) {
  torch::Tensor resolved = t.resolve_conj().resolve_neg();
  const torch::ScalarType plain = plain_type_of_size(resolved.element_size());
  if (resolved.scalar_type() == plain) return resolved;
  return resolved.view(plain);
}

torch::Tensor from_bits(const torch::Tensor& bits, torch::ScalarType dtype) {
  if (bits.scalar_type() == dtype) return bits;
  return bits.view(dtype);
}

torch::Tensor contiguous_bits(const torch::Tensor& t) {
  if (t.is_contiguous() && !t.is_conj() && !t.is_neg()) return t;
  return from_bits(bits_view(t).contiguous(), t.scalar_type());
}

torch::Tensor take_rows(const torch::Tensor& t, const std::vector<int64_t>& index) {
  torch::Tensor idx = torch::empty({static_cast<int64_t>(index.size())}, torch::kInt64);
  std::copy(index.begin(), index.end(), idx.data_ptr<int64_t>());
  idx = idx.to(t.device());
  return from_bits(bits_view(t).index_select(0, idx), t.scalar_type());
}

torch::Tensor cat_rows(const std::vector<torch::Tensor>& parts) {
  std::vector<torch::Tensor> bits;
  bits.reserve(parts.size());
  for (const auto& p : parts) bits.push_back(bits_view(p));
  return from_bits(torch::cat(bits, 0), parts.front().scalar_type());
}

bool same_bits(const torch::Tensor& a, const torch::Tensor& b) {
  if (a.scalar_type() != b.scalar_type() || a.sizes() != b.sizes()) return false;
  torch::Tensor x = bits_view(a);
  torch::Tensor y = bits_view(b).to(a.device());
  if (x.scalar_type() == torch::kComplexDouble) {  // compare bits, not values (NaN)
    x = torch::view_as_real(x).view(torch::kInt64);
    y = torch::view_as_real(y).view(torch::kInt64);
  }
  return x.equal(y);
}

}  // namespace rlwb::core
