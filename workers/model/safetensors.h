// Safetensors: RLWB's own reader and writer of the tensor file format of
// Hugging Face checkpoints (model.safetensors). Used by hf_checkpoint.cpp and
// by the tests that trade tensors with Python.
//
// The format: an 8-byte little-endian header length N, N bytes of JSON
//   {"__metadata__": {"format": "pt"},
//    "<name>": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...}
// then the raw little-endian bytes of every tensor, offsets relative to the
// end of the header. Supported dtypes: F64, F32, F16, BF16, I64, I32, I16,
// I8, U8, BOOL.
#pragma once

#include <torch/types.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace rlwb::workers::model {

struct SafetensorsEntry {
  std::string dtype;           // as stored: "F32", "BF16", ...
  std::vector<int64_t> shape;  // empty for a scalar
  uint64_t begin = 0;          // byte range in the data section
  uint64_t end = 0;
};

// Maps the file and checks the header completely (JSON, dtypes, shapes,
// offsets inside the file, byte counts that match the shapes) before any
// tensor is read. Every error is a ModelError naming the file (and the
// tensor where there is one).
class SafetensorsReader {
 public:
  explicit SafetensorsReader(const std::filesystem::path& path);
  ~SafetensorsReader();
  SafetensorsReader(const SafetensorsReader&) = delete;
  SafetensorsReader& operator=(const SafetensorsReader&) = delete;

  const std::filesystem::path& path() const { return path_; }
  std::vector<std::string> names() const;  // sorted
  bool contains(const std::string& name) const { return entries_.count(name) > 0; }
  const SafetensorsEntry& entry(const std::string& name) const;  // throws if absent
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // A CPU tensor holding a copy of the stored bytes, in the stored dtype.
  torch::Tensor tensor(const std::string& name) const;

 private:
  std::filesystem::path path_;
  const uint8_t* data_ = nullptr;  // start of the data section inside the mapping
  void* mapping_ = nullptr;
  size_t mapping_size_ = 0;
  std::map<std::string, SafetensorsEntry> entries_;
  std::map<std::string, std::string> metadata_;
};

// Every tensor of the file, by name.
std::map<std::string, torch::Tensor> read_safetensors(const std::filesystem::path& path);

// Writes the tensors (any device; contiguous copies are made as needed) in
// the given order. Names must be unique. metadata lands in "__metadata__";
// HF transformers wants {"format": "pt"}, the default. The file is written
// to "<path>.tmp" and renamed, so a reader never sees half a file.
void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata = {{"format", "pt"}});

// "F32" <-> torch::kFloat32, ...; both throw ModelError for other dtypes.
torch::Dtype safetensors_dtype(const std::string& name);
std::string safetensors_dtype_name(torch::Dtype dtype);

}  // namespace rlwb::workers::model
