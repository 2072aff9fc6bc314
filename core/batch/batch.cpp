#include "core/batch/batch.h"

#include <algorithm>
#include <sstream>

#include "core/batch/tensor_bits.h"

namespace rlwb::core {

namespace {

// "a, b, c" or "none", for messages that list what a batch does have.
template <typename Map>
std::string names_of(const Map& columns) {
  if (columns.empty()) return "none";
  std::string out;
  for (const auto& [name, value] : columns) {
    if (!out.empty()) out += ", ";
    out += name;
  }
  return out;
}

std::string shape_text(torch::IntArrayRef sizes) {
  std::ostringstream out;
  out << sizes;
  return out.str();
}

std::string per_row_shape(const torch::Tensor& t) { return shape_text(t.sizes().slice(1)); }

[[noreturn]] void fail(const std::string& op, const std::string& what) {
  throw BatchError("Batch::" + op + ": " + what);
}

}  // namespace

int64_t Batch::rows() const {
  if (!tensors_.empty()) return tensors_.begin()->second.size(0);
  if (!objects_.empty()) return static_cast<int64_t>(objects_.begin()->second->size());
  return 0;
}

void Batch::check_rows(const std::string& name, int64_t n) const {
  auto mismatch = [&](const std::string& other, int64_t other_rows) {
    throw BatchError("Batch: column '" + name + "' has " + std::to_string(n) + " rows but column '" + other +
                     "' has " + std::to_string(other_rows) +
                     "; every column of a batch needs one entry per row");
  };
  for (const auto& [other, t] : tensors_) {
    if (other != name && t.size(0) != n) mismatch(other, t.size(0));
  }
  for (const auto& [other, v] : objects_) {
    if (other != name && static_cast<int64_t>(v->size()) != n) {
      mismatch(other, static_cast<int64_t>(v->size()));
    }
  }
}

void Batch::set_tensor(const std::string& name, torch::Tensor value) {
  if (name.empty()) fail("set_tensor", "a column needs a non-empty name");
  if (std::string why = unsupported_tensor_reason(value); !why.empty()) {
    fail("set_tensor", "column '" + name + "': " + why);
  }
  if (value.dim() == 0) {
    fail("set_tensor", "column '" + name +
                           "' is a 0-dim tensor, which has no row dimension; keep a scalar "
                           "in meta() or give it shape {1}");
  }
  if (objects_.count(name)) {
    fail("set_tensor", "'" + name + "' is already an object column; erase() it first");
  }
  check_rows(name, value.size(0));
  tensors_[name] = std::move(value);
}

void Batch::set_objects(const std::string& name, std::vector<Json> values) {
  put_objects(name, std::make_shared<const Objects>(std::move(values)));
}

void Batch::put_objects(const std::string& name, std::shared_ptr<const Objects> values) {
  if (name.empty()) fail("set_objects", "a column needs a non-empty name");
  if (tensors_.count(name)) {
    fail("set_objects", "'" + name + "' is already a tensor column; erase() it first");
  }
  check_rows(name, static_cast<int64_t>(values->size()));
  objects_[name] = std::move(values);
}

void Batch::share_column(const Batch& from, const std::string& name, const std::string& as) {
  if (auto t = from.tensors_.find(name); t != from.tensors_.end())
    set_tensor(as, t->second);
  else if (auto o = from.objects_.find(name); o != from.objects_.end())
    put_objects(as, o->second);
  else
    fail("share_column", "no column '" + name + "' to share (columns: " + names_of(from.tensors_) + "; " +
                             names_of(from.objects_) + ")");
}

const torch::Tensor& Batch::tensor(const std::string& name) const {
  auto it = tensors_.find(name);
  if (it != tensors_.end()) return it->second;
  if (objects_.count(name)) {
    fail("tensor", "'" + name + "' is an object column, not a tensor column; use objects()");
  }
  fail("tensor", "no tensor column '" + name + "' (tensor columns: " + names_of(tensors_) + ")");
}

const std::vector<Batch::Json>& Batch::objects(const std::string& name) const {
  auto it = objects_.find(name);
  if (it != objects_.end()) return *it->second;
  if (tensors_.count(name)) {
    fail("objects", "'" + name + "' is a tensor column, not an object column; use tensor()");
  }
  fail("objects", "no object column '" + name + "' (object columns: " + names_of(objects_) + ")");
}

bool Batch::has(const std::string& name) const { return has_tensor(name) || has_objects(name); }

void Batch::erase(const std::string& name) {
  if (tensors_.erase(name) + objects_.erase(name) == 0) {
    fail("erase", "no column '" + name + "' to erase (columns: " + names_of(tensors_) + "; " +
                      names_of(objects_) + ")");
  }
}

std::vector<std::string> Batch::column_names() const {
  std::vector<std::string> names;
  for (const auto& [name, t] : tensors_) names.push_back(name);
  for (const auto& [name, v] : objects_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

Batch Batch::select(const std::vector<std::string>& names) const {
  Batch out;
  out.meta_ = meta_;
  for (const auto& name : names) {
    if (auto t = tensors_.find(name); t != tensors_.end()) {
      out.tensors_[name] = t->second;
    } else if (auto o = objects_.find(name); o != objects_.end()) {
      out.objects_[name] = o->second;
    } else {
      std::string all;
      for (const auto& n : column_names()) all += (all.empty() ? "" : ", ") + n;
      fail("select", "no column '" + name + "' (columns: " + (all.empty() ? "none" : all) + ")");
    }
  }
  return out;
}

Batch Batch::slice(int64_t begin, int64_t end) const {
  const int64_t n = rows();
  if (begin < 0 || end < begin || end > n) {
    fail("slice", "rows [" + std::to_string(begin) + ", " + std::to_string(end) +
                      ") are outside the batch's " + std::to_string(n) +
                      " rows; need 0 <= begin <= end <= rows()");
  }
  Batch out;
  out.meta_ = meta_;
  for (const auto& [name, t] : tensors_) out.tensors_[name] = t.narrow(0, begin, end - begin);
  for (const auto& [name, v] : objects_) {
    out.objects_[name] = std::make_shared<const Objects>(v->begin() + begin, v->begin() + end);
  }
  return out;
}

std::vector<Batch> Batch::chunk(int64_t n, bool pad, int64_t* padded_rows) const {
  if (n < 1) fail("chunk", "cannot split into " + std::to_string(n) + " parts; n must be >= 1");
  const int64_t total = rows();
  const int64_t part_rows = (total + n - 1) / n;
  const int64_t added = part_rows * n - total;
  if (added > 0 && !pad) {
    fail("chunk", std::to_string(total) + " rows do not split into " + std::to_string(n) +
                      " equal parts; pass pad=true to repeat rows up to " + std::to_string(part_rows * n) +
                      ", or choose n dividing the rows");
  }
  if (padded_rows != nullptr) *padded_rows = added;

  Batch source = *this;
  if (added > 0 && total > 0) {  // (0 rows always divide)
    std::vector<int64_t> index(static_cast<size_t>(total + added));
    for (int64_t i = 0; i < total + added; ++i) index[i] = i < total ? i : (i - total) % total;
    source = reorder(index);
  }
  std::vector<Batch> parts;
  parts.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) parts.push_back(source.slice(i * part_rows, (i + 1) * part_rows));
  return parts;
}

Batch Batch::concat(const std::vector<Batch>& parts) {
  if (parts.empty()) fail("concat", "no parts to concatenate; pass at least one batch");
  const Batch& first = parts.front();
  const std::vector<std::string> names = first.column_names();
  for (size_t i = 1; i < parts.size(); ++i) {
    if (parts[i].column_names() != names) {
      fail("concat", "part " + std::to_string(i) + " has columns (" + names_of(parts[i].tensors_) + "; " +
                         names_of(parts[i].objects_) + ") but part 0 has (" + names_of(first.tensors_) +
                         "; " + names_of(first.objects_) + "); all parts need the same columns");
    }
  }
  Batch out;
  out.meta_ = first.meta_;
  for (const auto& [name, t0] : first.tensors_) {
    std::vector<torch::Tensor> pieces;
    pieces.reserve(parts.size());
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].has_tensor(name)) {
        fail("concat",
             "column '" + name + "' is a tensor in part 0 but objects in part " + std::to_string(i));
      }
      const torch::Tensor& t = parts[i].tensors_.at(name);
      const std::string where = "column '" + name + "' in part " + std::to_string(i);
      if (t.scalar_type() != t0.scalar_type()) {
        fail("concat", where + " has dtype " + c10::toString(t.scalar_type()) + " but part 0 has " +
                           c10::toString(t0.scalar_type()));
      }
      if (t.sizes().slice(1) != t0.sizes().slice(1)) {
        fail("concat",
             where + " has rows of shape " + per_row_shape(t) + " but part 0 has " + per_row_shape(t0));
      }
      if (t.device() != t0.device()) {
        fail("concat", where + " is on " + t.device().str() + " but part 0 is on " + t0.device().str() +
                           "; move the parts with to() first");
      }
      pieces.push_back(t);
    }
    out.tensors_[name] = parts.size() == 1 ? t0 : cat_rows(pieces);
  }
  for (const auto& [name, v0] : first.objects_) {
    std::vector<Json> values;
    for (size_t i = 0; i < parts.size(); ++i) {
      if (!parts[i].has_objects(name)) {
        fail("concat",
             "column '" + name + "' is objects in part 0 but a tensor in part " + std::to_string(i));
      }
      const auto& v = *parts[i].objects_.at(name);
      values.insert(values.end(), v.begin(), v.end());
    }
    out.objects_[name] = std::make_shared<const Objects>(std::move(values));
  }
  return out;
}

void Batch::union_with(const Batch& other) {
  if (!meta_.is_object() || !other.meta_.is_object()) {
    fail("union_with", "meta must be a JSON object on both sides");
  }
  // Check everything first so that a failed union leaves this batch as it was.
  if (!other.empty() && !empty() && other.rows() != rows()) {
    fail("union_with", "the other batch has " + std::to_string(other.rows()) + " rows but this one has " +
                           std::to_string(rows()));
  }
  for (const auto& [name, t] : other.tensors_) {
    if (objects_.count(name)) {
      fail("union_with", "column '" + name + "' is objects here but a tensor in the other batch");
    }
    auto mine = tensors_.find(name);
    if (mine == tensors_.end()) continue;
    const torch::Tensor& m = mine->second;
    if (m.scalar_type() != t.scalar_type() || m.sizes() != t.sizes()) {
      fail("union_with", "column '" + name + "' differs: " + c10::toString(m.scalar_type()) +
                             shape_text(m.sizes()) + " here, " + c10::toString(t.scalar_type()) +
                             shape_text(t.sizes()) + " in the other batch; rename or erase one of them");
    }
    if (!same_bits(m, t)) {
      fail("union_with", "column '" + name +
                             "' has different values in the two batches; a union never "
                             "overwrites, so rename or erase one of them");
    }
  }
  for (const auto& [name, v] : other.objects_) {
    if (tensors_.count(name)) {
      fail("union_with", "column '" + name + "' is a tensor here but objects in the other batch");
    }
    auto mine = objects_.find(name);
    if (mine != objects_.end() && mine->second != v && *mine->second != *v) {
      fail("union_with", "object column '" + name +
                             "' has different values in the two batches; a union never "
                             "overwrites, so rename or erase one of them");
    }
  }
  for (const auto& [key, value] : other.meta_.items()) {
    auto mine = meta_.find(key);
    if (mine != meta_.end() && *mine != value) {
      fail("union_with",
           "meta key '" + key + "' is " + mine->dump() + " here but " + value.dump() + " in the other batch");
    }
  }
  for (const auto& [name, t] : other.tensors_) tensors_.emplace(name, t);
  for (const auto& [name, v] : other.objects_) objects_.emplace(name, v);
  for (const auto& [key, value] : other.meta_.items()) meta_.emplace(key, value);
}

Batch Batch::repeat(int64_t n, bool interleave) const {
  if (n < 1) fail("repeat", "n is " + std::to_string(n) + "; each row must be repeated n >= 1 times");
  const int64_t total = rows();
  std::vector<int64_t> index;
  index.reserve(static_cast<size_t>(total * n));
  if (interleave) {
    for (int64_t r = 0; r < total; ++r)
      for (int64_t k = 0; k < n; ++k) index.push_back(r);
  } else {
    for (int64_t k = 0; k < n; ++k)
      for (int64_t r = 0; r < total; ++r) index.push_back(r);
  }
  return reorder(index);
}

Batch Batch::reorder(const std::vector<int64_t>& index) const {
  const int64_t total = rows();
  for (size_t i = 0; i < index.size(); ++i) {
    if (index[i] < 0 || index[i] >= total) {
      fail("reorder", "index[" + std::to_string(i) + "] = " + std::to_string(index[i]) +
                          " is not a row of this " + std::to_string(total) + "-row batch");
    }
  }
  Batch out;
  out.meta_ = meta_;
  for (const auto& [name, t] : tensors_) out.tensors_[name] = take_rows(t, index);
  for (const auto& [name, v] : objects_) {
    std::vector<Json> values;
    values.reserve(index.size());
    for (int64_t i : index) values.push_back((*v)[static_cast<size_t>(i)]);
    out.objects_[name] = std::make_shared<const Objects>(std::move(values));
  }
  return out;
}

Batch Batch::to(const torch::Device& device) const {
  Batch out = *this;
  for (auto& [name, t] : out.tensors_) {
    if (t.device() != device) t = from_bits(bits_view(t).to(device), t.scalar_type());
  }
  return out;
}

bool Batch::equals(const Batch& other) const {
  if (column_names() != other.column_names() || meta_ != other.meta_) return false;
  for (const auto& [name, v] : objects_) {
    auto it = other.objects_.find(name);
    if (it == other.objects_.end() || (it->second != v && *it->second != *v)) return false;
  }
  for (const auto& [name, t] : tensors_) {
    auto it = other.tensors_.find(name);
    if (it == other.tensors_.end() || !same_bits(t, it->second)) return false;
  }
  return true;
}

}  // namespace rlwb::core
