#include "core/wire/wire.h"

#include <array>
#include <cstring>
#include <limits>
#include <utility>

#include "core/batch/tensor_bits.h"
#include "core/wire/shm_segment.h"

namespace rlwb::core {

namespace {

using Json = nlohmann::json;

constexpr std::array<const char*, 3> kReservedKeys = {"columns", "objects", "meta"};
constexpr size_t kMaxDims = 64;  // LibTorch's own limit on dimensions

// [SECTION] dtype names: the torch Python names, so that a reader of a
// header knows them already.

struct DtypeName {
  torch::ScalarType type;
  const char* name;
};

constexpr DtypeName kDtypes[] = {
    {torch::kUInt8, "uint8"},
    {torch::kInt8, "int8"},
    {torch::kInt16, "int16"},
    {torch::kInt32, "int32"},
    {torch::kInt64, "int64"},
    {torch::kFloat16, "float16"},
    {torch::kFloat32, "float32"},
    {torch::kFloat64, "float64"},
    {torch::kComplexHalf, "complex32"},
    {torch::kComplexFloat, "complex64"},
    {torch::kComplexDouble, "complex128"},
    {torch::kBool, "bool"},
    {torch::kBFloat16, "bfloat16"},
    {torch::kBits1x8, "bits1x8"},
    {torch::kBits2x4, "bits2x4"},
    {torch::kBits4x2, "bits4x2"},
    {torch::kBits8, "bits8"},
    {torch::kBits16, "bits16"},
    {torch::kFloat8_e5m2, "float8_e5m2"},
    {torch::kFloat8_e4m3fn, "float8_e4m3fn"},
    {torch::kFloat8_e5m2fnuz, "float8_e5m2fnuz"},
    {torch::kFloat8_e4m3fnuz, "float8_e4m3fnuz"},
    {torch::kUInt16, "uint16"},
    {torch::kUInt32, "uint32"},
    {torch::kUInt64, "uint64"},
    {torch::kUInt1, "uint1"},
    {torch::kUInt2, "uint2"},
    {torch::kUInt3, "uint3"},
    {torch::kUInt4, "uint4"},
    {torch::kUInt5, "uint5"},
    {torch::kUInt6, "uint6"},
    {torch::kUInt7, "uint7"},
    {torch::kInt1, "int1"},
    {torch::kInt2, "int2"},
    {torch::kInt3, "int3"},
    {torch::kInt4, "int4"},
    {torch::kInt5, "int5"},
    {torch::kInt6, "int6"},
    {torch::kInt7, "int7"},
    {torch::kFloat8_e8m0fnu, "float8_e8m0fnu"},
    {torch::kFloat4_e2m1fn_x2, "float4_e2m1fn_x2"},
    {c10::ScalarType::BComplex32, "bcomplex32"},
};

// [SECTION] Encoding

void release_tensor(void* /*data*/, void* hint) { delete static_cast<torch::Tensor*>(hint); }

// A frame that points into the tensor's memory and keeps the tensor alive
// until ZeroMQ has sent it.
zmq::message_t inline_frame(const torch::Tensor& t, size_t bytes) {
  if (bytes == 0) return zmq::message_t();
  torch::Tensor host = t.device().is_cpu()
                           ? contiguous_bits(t)
                           : from_bits(bits_view(t).to(torch::kCPU).contiguous(), t.scalar_type());
  void* data = host.data_ptr();
  return zmq::message_t(data, bytes, &release_tensor, new torch::Tensor(std::move(host)));
}

size_t tensor_bytes(const torch::Tensor& t) {
  return static_cast<size_t>(t.numel()) * static_cast<size_t>(t.element_size());
}

std::string dump_or_explain(const Json& header, const Batch& batch) {
  try {
    return header.dump();
  } catch (const Json::exception& e) {
    // Name the culprit: usually a string that is not UTF-8.
    for (const auto& [name, values] : batch.object_columns()) {
      try {
        (void)Json(*values).dump();
      } catch (const Json::exception&) {
        throw WireError("encode: object column '" + name + "' cannot be written as JSON (" + e.what() +
                        "); strings must be valid UTF-8 (keep raw bytes in a uint8 tensor)");
      }
    }
    throw WireError(std::string("encode: the header, a column name or meta cannot be written as "
                                "JSON (") +
                    e.what() + "); strings must be valid UTF-8");
  }
}

// [SECTION] Decoding: every field is checked before anything is built, so
// a malformed message costs no allocation and claims no shared memory.

[[noreturn]] void bad(const std::string& what) { throw WireError("decode: " + what); }

struct ColumnSpec {
  std::string name;
  torch::ScalarType dtype;
  std::vector<int64_t> shape;
  size_t bytes = 0;
  bool shm = false;
};

const Json& field(const Json& entry, const char* key, const std::string& where) {
  auto it = entry.find(key);
  if (it == entry.end()) bad(where + " has no '" + key + "'");
  return *it;
}

ColumnSpec parse_column(const Json& entry, size_t index) {
  std::string where = "columns[" + std::to_string(index) + "]";
  if (!entry.is_object()) bad(where + " is not an object");
  ColumnSpec c;
  const Json& name = field(entry, "name", where);
  if (!name.is_string() || name.get_ref<const std::string&>().empty()) {
    bad(where + ".name is not a non-empty string");
  }
  c.name = name.get<std::string>();
  where = "column '" + c.name + "'";

  const Json& dtype = field(entry, "dtype", where);
  if (!dtype.is_string()) bad(where + ": dtype is not a string");
  c.dtype = dtype_from_name(dtype.get<std::string>());

  const Json& shape = field(entry, "shape", where);
  if (!shape.is_array()) bad(where + ": shape is not an array");
  if (shape.empty()) bad(where + ": shape has no dimensions; a column needs dim 0 for its rows");
  if (shape.size() > kMaxDims) bad(where + ": shape has " + std::to_string(shape.size()) + " dims");
  uint64_t numel = 1;
  for (const Json& d : shape) {
    if (!d.is_number_integer()) bad(where + ": shape " + shape.dump() + " holds a non-integer");
    if (d.is_number_unsigned() ? d.get<uint64_t>() > uint64_t(INT64_MAX) : d.get<int64_t>() < 0) {
      bad(where + ": shape " + shape.dump() + " has a negative or out-of-range dimension");
    }
    int64_t v = d.get<int64_t>();
    c.shape.push_back(v);
    if (__builtin_mul_overflow(numel, static_cast<uint64_t>(v), &numel)) {
      bad(where + ": shape " + shape.dump() + " has more elements than fit in 64 bits");
    }
  }
  uint64_t expect = 0;
  if (__builtin_mul_overflow(numel, c10::elementSize(c.dtype), &expect) || expect > uint64_t(INT64_MAX)) {
    bad(where + ": shape " + shape.dump() + " of " + dtype.get<std::string>() +
        " is larger than any tensor can be");
  }
  const Json& bytes = field(entry, "bytes", where);
  if (!bytes.is_number_unsigned() && !(bytes.is_number_integer() && bytes.get<int64_t>() >= 0)) {
    bad(where + ": bytes is not a non-negative integer");
  }
  c.bytes = bytes.get<uint64_t>();
  if (c.bytes != expect) {
    bad(where + ": shape " + shape.dump() + " of " + dtype.get<std::string>() + " needs " +
        std::to_string(expect) + " bytes but the header says " + std::to_string(c.bytes));
  }
  const Json& transport = field(entry, "transport", where);
  if (transport == "shm") {
    c.shm = true;
  } else if (transport != "inline") {
    bad(where + ": unknown transport " + transport.dump() + " (expected \"inline\" or \"shm\")");
  }
  if (c.shm && c.bytes == 0) bad(where + ": an empty tensor cannot travel in shared memory");
  return c;
}

ShmDescriptor parse_descriptor(const zmq::message_t& frame, const std::string& column) {
  const std::string where = "column '" + column + "': shared-memory frame";
  if (frame.size() > 1024) bad(where + " is " + std::to_string(frame.size()) + " bytes, too big");
  Json d = Json::parse(frame.data<char>(), frame.data<char>() + frame.size(), nullptr, false);
  if (d.is_discarded() || !d.is_object()) bad(where + " is not a JSON object");
  auto name = d.find("name");
  auto id = d.find("id");
  auto gen = d.find("gen");
  if (name == d.end() || !name->is_string() || id == d.end() || !id->is_number_unsigned() || gen == d.end() ||
      !gen->is_number_unsigned() || gen->get<uint64_t>() > UINT32_MAX) {
    bad(where + " needs {\"name\": string, \"id\": unsigned, \"gen\": unsigned 32-bit}");
  }
  return {name->get<std::string>(), id->get<uint64_t>(), gen->get<uint32_t>()};
}

// Wraps a received frame without copying; the tensor owns the frame. A frame
// whose address is not aligned for the element type (ZeroMQ gives no
// alignment guarantee) is copied once instead.
torch::Tensor adopt_frame(zmq::message_t& frame, const ColumnSpec& c) {
  const auto options = torch::TensorOptions().dtype(c.dtype);
  if (c.bytes == 0) return torch::empty(c.shape, options);
  const size_t align = c10::elementSize(c.dtype);
  if (reinterpret_cast<uintptr_t>(frame.data()) % align != 0) {
    torch::Tensor copy = torch::empty(c.shape, options);
    std::memcpy(copy.data_ptr(), frame.data(), c.bytes);
    return copy;
  }
  auto* owned = new zmq::message_t(std::move(frame));
  return torch::from_blob(
      owned->data(), c.shape, [owned](void*) { delete owned; }, options);
}

}  // namespace

std::string dtype_name(torch::ScalarType type) {
  for (const auto& d : kDtypes) {
    if (d.type == type) return d.name;
  }
  throw WireError(std::string("dtype ") + c10::toString(type) +
                  " cannot go on the wire (quantized types are not supported: send int_repr() "
                  "and keep scale/zero point in meta)");
}

torch::ScalarType dtype_from_name(const std::string& name) {
  for (const auto& d : kDtypes) {
    if (name == d.name) return d.type;
  }
  throw WireError("unknown dtype '" + name.substr(0, 64) +
                  "' in a message (a peer built with another LibTorch?)");
}

void encode_message(const nlohmann::json& header, const Batch& batch, std::vector<zmq::message_t>& out,
                    const WireOptions& options) {
  if (!header.is_object()) throw WireError("encode: the header must be a JSON object");
  for (const char* key : kReservedKeys) {
    if (header.contains(key)) {
      throw WireError(std::string("encode: header key '") + key + "' is reserved for the codec; rename it");
    }
  }
  Json h = header;
  Json columns = Json::array();
  std::vector<bool> via_shm;
  for (const auto& [name, t] : batch.tensors()) {
    const size_t bytes = tensor_bytes(t);
    const bool shm = options.shm_threshold_bytes > 0 && bytes >= options.shm_threshold_bytes;
    via_shm.push_back(shm);
    columns.push_back({{"name", name},
                       {"dtype", dtype_name(t.scalar_type())},
                       {"shape", t.sizes().vec()},
                       {"bytes", bytes},
                       {"transport", shm ? "shm" : "inline"}});
  }
  Json objects = Json::object();
  for (const auto& [name, values] : batch.object_columns()) objects[name] = *values;
  h["columns"] = std::move(columns);
  h["objects"] = std::move(objects);
  h["meta"] = batch.meta();
  const std::string text = dump_or_explain(h, batch);

  // Everything that can fail on bad input has been checked; now the frames.
  std::vector<zmq::message_t> frames;
  frames.reserve(batch.tensors().size() + 1);
  frames.emplace_back(text.data(), text.size());
  std::vector<ShmDescriptor> published;
  try {
    size_t i = 0;
    for (const auto& [name, t] : batch.tensors()) {
      if (via_shm[i++]) {
        published.push_back(shm_publish(t));
        const ShmDescriptor& d = published.back();
        const std::string frame = Json{{"name", d.name}, {"id", d.id}, {"gen", d.generation}}.dump();
        frames.emplace_back(frame.data(), frame.size());
      } else {
        frames.push_back(inline_frame(t, tensor_bytes(t)));
      }
    }
  } catch (...) {
    for (const auto& d : published) shm_withdraw(d);
    throw;
  }
  for (auto& f : frames) out.push_back(std::move(f));
}

Message decode_message(std::vector<zmq::message_t>& frames, size_t first) {
  if (first >= frames.size()) {
    bad("the message has " + std::to_string(frames.size()) + " frames, so no header at frame " +
        std::to_string(first));
  }
  const zmq::message_t& head = frames[first];
  Json h = Json::parse(head.data<char>(), head.data<char>() + head.size(), nullptr, false);
  if (h.is_discarded()) {
    bad("the header frame (" + std::to_string(head.size()) + " bytes) is not valid JSON");
  }
  if (!h.is_object()) bad("the header is JSON but not an object");
  auto columns = h.find("columns");
  auto objects = h.find("objects");
  auto meta = h.find("meta");
  if (columns == h.end() || !columns->is_array()) {
    bad("the header has no 'columns' array (not a message from encode_message?)");
  }
  if (objects == h.end() || !objects->is_object()) bad("the header has no 'objects' object");
  if (meta == h.end() || !meta->is_object()) bad("the header has no 'meta' object");

  const size_t tensor_frames = frames.size() - first - 1;
  if (tensor_frames != columns->size()) {
    bad("the header lists " + std::to_string(columns->size()) + " tensor columns but " +
        std::to_string(tensor_frames) + " tensor frames follow it (truncated message?)");
  }
  std::vector<ColumnSpec> specs;
  std::vector<ShmDescriptor> descriptors(columns->size());
  for (size_t i = 0; i < columns->size(); ++i) {
    specs.push_back(parse_column((*columns)[i], i));
    const ColumnSpec& c = specs.back();
    const zmq::message_t& frame = frames[first + 1 + i];
    if (c.shm) {
      descriptors[i] = parse_descriptor(frame, c.name);
    } else if (frame.size() != c.bytes) {
      bad("column '" + c.name + "': its frame holds " + std::to_string(frame.size()) +
          " bytes but the header says " + std::to_string(c.bytes));
    }
  }
  for (const auto& [name, values] : objects->items()) {
    if (!values.is_array()) bad("object column '" + name + "' is not an array of values");
  }

  Message msg;
  try {
    for (size_t i = 0; i < specs.size(); ++i) {
      const ColumnSpec& c = specs[i];
      torch::Tensor t = c.shm ? shm_claim(descriptors[i], c.shape, c.dtype, c.bytes)
                              : adopt_frame(frames[first + 1 + i], c);
      if (msg.batch.has_tensor(c.name)) bad("column '" + c.name + "' appears twice");
      msg.batch.set_tensor(c.name, std::move(t));
    }
    for (auto& [name, values] : objects->items()) {
      msg.batch.set_objects(name, values.get<std::vector<Json>>());
    }
  } catch (const BatchError& e) {
    bad(std::string("the columns do not form a batch: ") + e.what());
  }
  msg.batch.meta() = std::move(*meta);
  for (const char* key : kReservedKeys) h.erase(key);
  msg.header = std::move(h);
  return msg;
}

}  // namespace rlwb::core
