#include "core/data/dataset_file.h"

#include "core/data/parquet_rows.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace rlwb::core::data {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

DatasetFile read_json_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw DatasetError(path + ": cannot be read (" + std::strerror(errno) + "); check its permissions");
  DatasetFile file{path, {}, {}};
  std::string line;
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::json row;
    try {
      row = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error& e) {
      throw DatasetError(path + " line " + std::to_string(number) + ": not valid JSON (" + e.what() +
                         "); JSON Lines files hold one JSON object per line");
    }
    if (!row.is_object())
      throw DatasetError(path + " line " + std::to_string(number) + ": is " + std::string(row.type_name()) +
                         ", not an object; each line must be one row {column: value, ...}");
    file.rows.push_back(std::move(row));
    file.lines.push_back(number);
  }
  return file;
}

}  // namespace

std::string DatasetFile::where(size_t row) const {
  if (row < lines.size()) return path + " line " + std::to_string(lines[row]);
  return path + " row " + std::to_string(row + 1);
}

DatasetFile read_dataset_file(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    throw DatasetError(path + ": no such file; check the path (relative paths are read from the directory " +
                       "rlwb runs in: " + fs::current_path().string() + ")");
  if (fs::is_directory(path, ec))
    throw DatasetError(path + ": is a directory; name the .parquet or .jsonl files in it");
  if (ends_with(path, ".parquet")) return DatasetFile{path, read_parquet_rows(path), {}};
  if (ends_with(path, ".jsonl") || ends_with(path, ".json")) return read_json_lines(path);
  throw DatasetError(path + ": unknown dataset format; RLWB reads .parquet and .jsonl (JSON Lines) files");
}

}  // namespace rlwb::core::data
