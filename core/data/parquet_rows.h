// Parquet -> rows, through Arrow's Parquet reader (the pyarrow wheel's
// libparquet). The only file that includes Arrow headers, so that a build
// compiles them once.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace rlwb::core::data {

// One JSON object per row, keyed by the schema's top-level field names.
// Nested types map as pyarrow's to_pylist() does: struct -> object, list ->
// array, map -> array of {key, value}, null -> null, int/float/bool/string
// as themselves, binary as a string. Throws DatasetError naming the file
// when it is not Parquet or a column has a type RLWB does not read (the
// column and the type named).
std::vector<nlohmann::json> read_parquet_rows(const std::string& path);

}  // namespace rlwb::core::data
