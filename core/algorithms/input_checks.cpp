#include "core/algorithms/input_checks.h"

#include <sstream>

#include "core/algorithms/algorithm_error.h"

namespace rlwb::core::algorithms::detail {
namespace {

std::string shape_of(const torch::Tensor& t) {
  std::ostringstream s;
  s << t.sizes();
  return s.str();
}

void check_defined(std::string_view fn, std::string_view name, const torch::Tensor& t) {
  if (!t.defined()) fail(fn, "'" + std::string(name) + "' is an undefined tensor; pass a tensor");
}

}  // namespace

void fail(std::string_view fn, const std::string& what) {
  throw AlgorithmError(std::string(fn) + ": " + what);
}

torch::Tensor bool_mask(std::string_view fn, const torch::Tensor& mask, const torch::Tensor& like,
                        std::string_view like_name) {
  check_defined(fn, "mask", mask);
  check_defined(fn, like_name, like);
  if (mask.sizes() != like.sizes()) {
    fail(fn, "mask has shape " + shape_of(mask) + " but '" + std::string(like_name) + "' has shape " +
                 shape_of(like) + "; they must be equal ([batch, response_len])");
  }
  return mask.scalar_type() == torch::kBool ? mask : mask.ne(0);
}

void check_dim(std::string_view fn, std::string_view name, const torch::Tensor& t, int64_t dim) {
  check_defined(fn, name, t);
  if (t.dim() != dim) {
    fail(fn, "'" + std::string(name) + "' has shape " + shape_of(t) + "; expected " + std::to_string(dim) +
                 " dimension" + (dim == 1 ? "" : "s") +
                 (dim == 2   ? " ([batch, response_len])"
                  : dim == 1 ? " ([batch])"
                             : ""));
  }
}

void check_same_shape(std::string_view fn, std::string_view a_name, const torch::Tensor& a,
                      std::string_view b_name, const torch::Tensor& b) {
  check_defined(fn, a_name, a);
  check_defined(fn, b_name, b);
  if (a.sizes() != b.sizes()) {
    fail(fn, "'" + std::string(a_name) + "' has shape " + shape_of(a) + " but '" + std::string(b_name) +
                 "' has shape " + shape_of(b) + "; they must be equal");
  }
}

void check_rows(std::string_view fn, std::string_view name, const torch::Tensor& t, int64_t rows) {
  check_dim(fn, name, t, 1);
  if (t.size(0) != rows) {
    fail(fn, "'" + std::string(name) + "' has " + std::to_string(t.size(0)) + " entries but the batch has " +
                 std::to_string(rows) + " rows; give one per row");
  }
}

torch::Tensor floating(const torch::Tensor& t) {
  auto type = t.scalar_type();
  if (type == torch::kFloat32 || type == torch::kFloat64) return t;
  return t.to(torch::kFloat32);
}

torch::Tensor zero_padding(const torch::Tensor& values, const torch::Tensor& bool_mask) {
  torch::Tensor x = floating(values);
  return torch::where(bool_mask, x, torch::zeros({}, x.options()));
}

}  // namespace rlwb::core::algorithms::detail
