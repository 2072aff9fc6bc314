#include "core/data/parquet_rows.h"

#include "core/data/dataset_file.h"

#include <arrow/api.h>
#include <arrow/io/file.h>
#include <parquet/arrow/reader.h>
#include <parquet/exception.h>

namespace rlwb::core::data {
namespace {

// A column type RLWB does not read: named with its Arrow type.
struct UnsupportedType : std::runtime_error {
  using std::runtime_error::runtime_error;
};

nlohmann::json value_at(const arrow::Array& array, int64_t i);

template <typename ListArray>
nlohmann::json list_at(const arrow::Array& array, int64_t i) {
  const auto& list = static_cast<const ListArray&>(array);
  const auto& values = *list.values();
  nlohmann::json out = nlohmann::json::array();
  const int64_t begin = list.value_offset(i), end = begin + list.value_length(i);
  for (int64_t k = begin; k < end; ++k) out.push_back(value_at(values, k));
  return out;
}

template <typename NumberArray>
nlohmann::json number_at(const arrow::Array& array, int64_t i) {
  return static_cast<const NumberArray&>(array).Value(i);
}

nlohmann::json value_at(const arrow::Array& array, int64_t i) {
  if (array.IsNull(i)) return nullptr;
  switch (array.type_id()) {
    case arrow::Type::NA:
      return nullptr;
    case arrow::Type::BOOL:
      return static_cast<const arrow::BooleanArray&>(array).Value(i);
    case arrow::Type::INT8:
      return number_at<arrow::Int8Array>(array, i);
    case arrow::Type::INT16:
      return number_at<arrow::Int16Array>(array, i);
    case arrow::Type::INT32:
      return number_at<arrow::Int32Array>(array, i);
    case arrow::Type::INT64:
      return number_at<arrow::Int64Array>(array, i);
    case arrow::Type::UINT8:
      return number_at<arrow::UInt8Array>(array, i);
    case arrow::Type::UINT16:
      return number_at<arrow::UInt16Array>(array, i);
    case arrow::Type::UINT32:
      return number_at<arrow::UInt32Array>(array, i);
    case arrow::Type::UINT64:
      return number_at<arrow::UInt64Array>(array, i);
    case arrow::Type::FLOAT:
      return number_at<arrow::FloatArray>(array, i);
    case arrow::Type::DOUBLE:
      return number_at<arrow::DoubleArray>(array, i);
    case arrow::Type::STRING:
      return static_cast<const arrow::StringArray&>(array).GetString(i);
    case arrow::Type::LARGE_STRING:
      return static_cast<const arrow::LargeStringArray&>(array).GetString(i);
    case arrow::Type::STRING_VIEW:
      return std::string(static_cast<const arrow::StringViewArray&>(array).GetView(i));
    case arrow::Type::BINARY:
      return static_cast<const arrow::BinaryArray&>(array).GetString(i);
    case arrow::Type::LARGE_BINARY:
      return static_cast<const arrow::LargeBinaryArray&>(array).GetString(i);
    case arrow::Type::LIST:
      return list_at<arrow::ListArray>(array, i);
    case arrow::Type::LARGE_LIST:
      return list_at<arrow::LargeListArray>(array, i);
    case arrow::Type::FIXED_SIZE_LIST:
      return list_at<arrow::FixedSizeListArray>(array, i);
    case arrow::Type::STRUCT: {
      const auto& s = static_cast<const arrow::StructArray&>(array);
      nlohmann::json out = nlohmann::json::object();
      for (int k = 0; k < s.num_fields(); ++k)
        out[s.struct_type()->field(k)->name()] = value_at(*s.field(k), i);
      return out;
    }
    case arrow::Type::MAP: {
      // As pyarrow's to_pylist(): a list of (key, value) pairs.
      const auto& m = static_cast<const arrow::MapArray&>(array);
      nlohmann::json out = nlohmann::json::array();
      const int64_t begin = m.value_offset(i), end = begin + m.value_length(i);
      for (int64_t k = begin; k < end; ++k) out.push_back({value_at(*m.keys(), k), value_at(*m.items(), k)});
      return out;
    }
    case arrow::Type::DICTIONARY: {
      const auto& d = static_cast<const arrow::DictionaryArray&>(array);
      return value_at(*d.dictionary(), d.GetValueIndex(i));
    }
    default:
      throw UnsupportedType(array.type()->ToString());
  }
}

template <typename T>
T or_fail(arrow::Result<T> result, const std::string& path, const std::string& doing) {
  if (!result.ok())
    throw DatasetError(path + ": " + doing + " failed (" + result.status().ToString() +
                       "); is it a Parquet file, written whole?");
  return std::move(result).ValueUnsafe();
}

}  // namespace

std::vector<nlohmann::json> read_parquet_rows(const std::string& path) {
  auto input = or_fail(arrow::io::ReadableFile::Open(path), path, "opening");
  std::shared_ptr<arrow::Table> table;
  try {
    auto reader = or_fail(parquet::arrow::OpenFile(input, arrow::default_memory_pool()), path, "reading");
    table = or_fail(reader->ReadTable(), path, "reading the table");
  } catch (const parquet::ParquetException& e) {
    throw DatasetError(path + ": not a readable Parquet file (" + e.what() + ")");
  }
  std::vector<nlohmann::json> rows(static_cast<size_t>(table->num_rows()), nlohmann::json::object());
  for (int c = 0; c < table->num_columns(); ++c) {
    const std::string& name = table->schema()->field(c)->name();
    size_t row = 0;
    for (const auto& chunk : table->column(c)->chunks()) {
      try {
        for (int64_t i = 0; i < chunk->length(); ++i) rows[row++][name] = value_at(*chunk, i);
      } catch (const UnsupportedType& e) {
        throw DatasetError(path + " column '" + name + "': holds " + e.what() +
                           ", a type RLWB does not read; write it as text, numbers, lists or structs");
      }
    }
  }
  return rows;
}

}  // namespace rlwb::core::data
