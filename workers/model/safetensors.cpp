#include "workers/model/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "workers/model/model_error.h"

namespace rlwb::workers::model {
namespace {

using Json = nlohmann::json;

struct DtypeName {
  const char* name;
  torch::Dtype dtype;
};
constexpr DtypeName kDtypes[] = {
    {"F64", torch::kFloat64}, {"F32", torch::kFloat32}, {"F16", torch::kFloat16}, {"BF16", torch::kBFloat16},
    {"I64", torch::kInt64},   {"I32", torch::kInt32},   {"I16", torch::kInt16},   {"I8", torch::kInt8},
    {"U8", torch::kUInt8},    {"BOOL", torch::kBool},
};

[[noreturn]] void fail(const std::filesystem::path& path, const std::string& what) {
  throw ModelError(path.string() + ": " + what);
}

// Header sizes above this are not a real checkpoint (the spec caps it at 100 MB).
constexpr uint64_t kMaxHeaderBytes = 100ull << 20;

}  // namespace

torch::Dtype safetensors_dtype(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return d.dtype;
  }
  throw ModelError("safetensors dtype '" + name +
                   "' is not supported (supported: F64, F32, F16, BF16, I64, I32, I16, I8, U8, BOOL)");
}

std::string safetensors_dtype_name(torch::Dtype dtype) {
  for (const auto& d : kDtypes) {
    if (dtype == d.dtype) return d.name;
  }
  throw ModelError(std::string("torch dtype ") + c10::toString(dtype) + " cannot be stored in safetensors");
}

SafetensorsReader::SafetensorsReader(const std::filesystem::path& path) : path_(path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail(path, std::string("cannot open: ") + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail(path, std::string("cannot stat: ") + std::strerror(errno));
  }
  mapping_size_ = static_cast<size_t>(st.st_size);
  if (mapping_size_ < 8) {
    ::close(fd);
    fail(path, "too short for a safetensors file (" + std::to_string(mapping_size_) + " bytes)");
  }
  mapping_ = ::mmap(nullptr, mapping_size_, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (mapping_ == MAP_FAILED) {
    mapping_ = nullptr;
    fail(path, std::string("cannot map: ") + std::strerror(errno));
  }
  try {
    const auto* bytes = static_cast<const uint8_t*>(mapping_);
    uint64_t header_len = 0;
    for (int i = 7; i >= 0; --i) header_len = (header_len << 8) | bytes[i];
    if (header_len > kMaxHeaderBytes || 8 + header_len > mapping_size_) {
      fail(path, "header length " + std::to_string(header_len) + " does not fit in the file of " +
                     std::to_string(mapping_size_) + " bytes (not a safetensors file?)");
    }
    Json header;
    try {
      header = Json::parse(bytes + 8, bytes + 8 + header_len);
    } catch (const Json::exception& e) {
      fail(path, std::string("header is not valid JSON: ") + e.what());
    }
    if (!header.is_object()) fail(path, "header is not a JSON object");
    data_ = bytes + 8 + header_len;
    const uint64_t data_size = mapping_size_ - 8 - header_len;
    for (const auto& [name, value] : header.items()) {
      if (name == "__metadata__") {
        if (!value.is_object()) fail(path, "__metadata__ is not an object");
        for (const auto& [k, v] : value.items()) {
          if (!v.is_string()) fail(path, "__metadata__ value '" + k + "' is not a string");
          metadata_[k] = v.get<std::string>();
        }
        continue;
      }
      const std::string where = "tensor '" + name + "': ";
      if (!value.is_object() || !value.contains("dtype") || !value.contains("shape") ||
          !value.contains("data_offsets")) {
        fail(path, where + "needs dtype, shape and data_offsets");
      }
      SafetensorsEntry e;
      try {
        e.dtype = value.at("dtype").get<std::string>();
        e.shape = value.at("shape").get<std::vector<int64_t>>();
        auto offsets = value.at("data_offsets").get<std::vector<uint64_t>>();
        if (offsets.size() != 2) fail(path, where + "data_offsets must have two numbers");
        e.begin = offsets[0];
        e.end = offsets[1];
      } catch (const Json::exception& ex) {
        fail(path, where + "malformed entry: " + ex.what());
      }
      torch::Dtype dtype;
      try {
        dtype = safetensors_dtype(e.dtype);
      } catch (const ModelError& ex) {
        fail(path, where + ex.what());
      }
      uint64_t numel = 1;
      for (int64_t d : e.shape) {
        if (d < 0) fail(path, where + "negative dimension in shape");
        numel *= static_cast<uint64_t>(d);
      }
      const uint64_t expected = numel * c10::elementSize(dtype);
      if (e.begin > e.end || e.end > data_size) {
        fail(path, where + "data_offsets [" + std::to_string(e.begin) + ", " + std::to_string(e.end) +
                       ") lie outside the data section of " + std::to_string(data_size) +
                       " bytes (truncated file?)");
      }
      if (e.end - e.begin != expected) {
        fail(path, where + "holds " + std::to_string(e.end - e.begin) + " bytes but shape and dtype " +
                       e.dtype + " need " + std::to_string(expected));
      }
      entries_.emplace(name, std::move(e));
    }
  } catch (...) {
    ::munmap(mapping_, mapping_size_);
    mapping_ = nullptr;
    throw;
  }
}

SafetensorsReader::~SafetensorsReader() {
  if (mapping_ != nullptr) ::munmap(mapping_, mapping_size_);
}

std::vector<std::string> SafetensorsReader::names() const {
  std::vector<std::string> out;
  out.reserve(entries_.size());
  for (const auto& [name, e] : entries_) out.push_back(name);
  return out;
}

const SafetensorsEntry& SafetensorsReader::entry(const std::string& name) const {
  auto it = entries_.find(name);
  if (it == entries_.end()) fail(path_, "has no tensor '" + name + "'");
  return it->second;
}

torch::Tensor SafetensorsReader::tensor(const std::string& name) const {
  const SafetensorsEntry& e = entry(name);
  torch::Tensor out = torch::empty(e.shape, torch::TensorOptions().dtype(safetensors_dtype(e.dtype)));
  if (e.end > e.begin) std::memcpy(out.data_ptr(), data_ + e.begin, e.end - e.begin);
  return out;
}

std::map<std::string, torch::Tensor> read_safetensors(const std::filesystem::path& path) {
  SafetensorsReader reader(path);
  std::map<std::string, torch::Tensor> out;
  for (const auto& name : reader.names()) out.emplace(name, reader.tensor(name));
  return out;
}

void write_safetensors(const std::filesystem::path& path,
                       const std::vector<std::pair<std::string, torch::Tensor>>& tensors,
                       const std::map<std::string, std::string>& metadata) {
  Json header = Json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::vector<torch::Tensor> contiguous;
  contiguous.reserve(tensors.size());
  std::set<std::string> seen;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    if (name == "__metadata__" || !seen.insert(name).second) {
      fail(path, "tensor name '" + name + "' is reserved or given twice");
    }
    std::string dtype;
    try {
      dtype = safetensors_dtype_name(t.scalar_type());
    } catch (const ModelError& ex) {
      fail(path, "tensor '" + name + "': " + ex.what());
    }
    torch::Tensor c = t.detach().to(torch::kCPU).contiguous();
    const uint64_t bytes = static_cast<uint64_t>(c.numel()) * c.element_size();
    header[name] = {{"dtype", dtype}, {"shape", c.sizes().vec()}, {"data_offsets", {offset, offset + bytes}}};
    offset += bytes;
    contiguous.push_back(std::move(c));
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // the data section starts 8-aligned
  const auto tmp = std::filesystem::path(path.string() + ".tmp");
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) fail(path, "cannot write " + tmp.string());
    uint64_t n = text.size();
    char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<char>((n >> (8 * i)) & 0xff);
    out.write(len, 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    for (const auto& c : contiguous) {
      out.write(static_cast<const char*>(c.data_ptr()),
                static_cast<std::streamsize>(c.numel() * c.element_size()));
    }
    out.flush();
    if (!out) fail(path, "write failed (disk full?)");
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace rlwb::workers::model
