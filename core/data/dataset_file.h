// A dataset file read into rows: each row one JSON object, column name ->
// value, whatever the file's format.
//   .parquet         through Arrow/Parquet C++ (parquet_rows.h): structs
//                    become objects, lists arrays, nulls null
//   .jsonl / .json   JSON Lines: one object per line, blank lines skipped
// Every error is a DatasetError whose message names the file (and the row,
// and the column where one is to blame) and says what to do. Nothing here
// knows what the columns mean: verl_rows.h reads verl's columns.
#pragma once

#include <nlohmann/json.hpp>

#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core::data {

struct DatasetError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct DatasetFile {
  std::string path;
  std::vector<nlohmann::json> rows;  // objects
  // Where row i is, for messages: "FILE row 3" (Parquet) or "FILE line 7"
  // (JSON Lines, counting blank lines), counting from 1.
  std::string where(size_t row) const;
  std::vector<int64_t> lines;  // JSON Lines: the line of each row; empty for Parquet
};

// Throws DatasetError for a file that is missing, unreadable, of an unknown
// extension, or not valid in its format.
DatasetFile read_dataset_file(const std::string& path);

}  // namespace rlwb::core::data
