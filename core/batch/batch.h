// Batch: the one container that moves between dataflow nodes (HybridFlow's
// DataProto). Used by the controller, the wire codec, dispatch and every
// worker method.
//
// A Batch has `rows()` rows shared by all columns:
//   - tensor columns: name -> torch::Tensor whose dim 0 is the row dimension;
//   - object columns: name -> one JSON value per row (prompt text, ground
//     truth, sandbox verdicts, ...);
//   - meta: one JSON object for the whole batch (temperature, metrics, ...).
// Copying a Batch copies no column data: tensors share their storage, and
// object columns, which no method changes in place, are shared too (a
// controller hands the same prompts and texts from node to node).
// A Batch with no columns has 0 rows. Every operation that breaks the row
// invariant throws BatchError with a message that names the column.
#pragma once

#include <torch/types.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

class BatchError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class Batch {
 public:
  using Json = nlohmann::json;
  using Objects = std::vector<Json>;

  Batch() = default;

  // Number of rows; 0 when there are no columns.
  int64_t rows() const;
  bool empty() const { return tensors_.empty() && objects_.empty(); }

  // Columns. set_* checks that the row count matches the other columns
  // (any count is accepted for the first column; replacing a column keeps
  // the check against the rest). A 0-dim tensor cannot be a column (it has
  // no row dimension): keep scalars in meta or as shape {1}. Any dtype but
  // the quantized ones; strided layout only. A name is either a tensor or
  // an object column, never both.
  void set_tensor(const std::string& name, torch::Tensor value);
  void set_objects(const std::string& name, std::vector<Json> values);
  const torch::Tensor& tensor(const std::string& name) const;       // throws if absent
  const std::vector<Json>& objects(const std::string& name) const;  // throws if absent
  // This batch gets `from`'s column `name` as `as`, sharing its data (a
  // tensor's storage, an object column's values) instead of copying it.
  // The row check and the tensor/object rule are set_*'s.
  void share_column(const Batch& from, const std::string& name, const std::string& as);
  bool has(const std::string& name) const;
  bool has_tensor(const std::string& name) const { return tensors_.count(name) > 0; }
  bool has_objects(const std::string& name) const { return objects_.count(name) > 0; }
  void erase(const std::string& name);  // throws if absent
  // All column names, tensor and object, sorted.
  std::vector<std::string> column_names() const;

  const std::map<std::string, torch::Tensor>& tensors() const { return tensors_; }
  const std::map<std::string, std::shared_ptr<const Objects>>& object_columns() const { return objects_; }
  Json& meta() { return meta_; }
  const Json& meta() const { return meta_; }

  // A new Batch with only the named columns (tensor or object; meta kept).
  // Throws naming the first missing column.
  Batch select(const std::vector<std::string>& names) const;

  // Rows [begin, end) of every column; tensors are views, not copies.
  // Requires 0 <= begin <= end <= rows().
  Batch slice(int64_t begin, int64_t end) const;

  // Splits into n parts of equal size, in row order (dispatch's split_dp).
  // pad=false: rows must divide by n, else BatchError (say pad=true).
  // pad=true: when rows don't divide, rows 0, 1, 2, ... are repeated at the
  // end (cycling if n > rows) until every part has ceil(rows/n) rows; the
  // number of added rows goes to *padded_rows (if given), so the caller can
  // drop that many rows from the end of the concatenated result. Parts
  // without padding are views of this batch's tensors. Each part keeps meta.
  std::vector<Batch> chunk(int64_t n, bool pad = false, int64_t* padded_rows = nullptr) const;

  // Concatenates along rows. All parts must have the same columns, dtypes,
  // devices and per-row shapes; meta is taken from the first part. Throws
  // for an empty list.
  static Batch concat(const std::vector<Batch>& parts);

  // Adds the other batch's columns to this one. A column present in both
  // must be equal (same dtype, shape and values), otherwise BatchError names
  // it: a union never overwrites silently. Top-level meta keys merge the
  // same way. Checks everything before changing anything.
  void union_with(const Batch& other);

  // Repeats every row n times: interleave=true gives r0 r0 r1 r1 ..., false
  // gives r0 r1 ... r0 r1 ... (GRPO's n samples per prompt use interleave).
  // n must be >= 1.
  Batch repeat(int64_t n, bool interleave = true) const;

  // Rows in the given order (a permutation or any index list, repeats
  // allowed); every index must be in [0, rows()).
  Batch reorder(const std::vector<int64_t>& index) const;

  // Moves every tensor to the device (no-op for tensors already there).
  Batch to(const torch::Device& device) const;

  // Same columns with the same dtypes, shapes and bytes (bitwise, so NaN
  // equals NaN), the same object values and the same meta. For tests and
  // union_with; devices may differ.
  bool equals(const Batch& other) const;

 private:
  void check_rows(const std::string& name, int64_t n) const;

  void put_objects(const std::string& name, std::shared_ptr<const Objects> values);

  std::map<std::string, torch::Tensor> tensors_;
  std::map<std::string, std::shared_ptr<const Objects>> objects_;
  Json meta_ = Json::object();
};

}  // namespace rlwb::core
