// Dataset files for the tests, written the way a user's files are: Parquet
// by pyarrow (the venv's; scripts/setup.sh), JSON Lines by hand.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "app/catalog.h"
#include "core/validate/validator.h"
#include "tests/run_program.h"
#include "tests/test_paths.h"

namespace rlwb::testing {

// A fresh directory under the temp dir, removed by the destructor.
struct DatasetDir {
  std::filesystem::path path;
  explicit DatasetDir(const std::string& name)
      : path(std::filesystem::temp_directory_path() / (name + "-" + std::to_string(getpid()))) {
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~DatasetDir() { std::filesystem::remove_all(path); }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

// verl's row: prompt (one user message), data_source, ability,
// reward_model {style, ground_truth}, extra_info {split, index}.
inline nlohmann::json verl_row(const std::string& question, const std::string& answer, int index,
                               const std::string& source = "openai/gsm8k") {
  return {{"data_source", source},
          {"prompt", nlohmann::json::array({{{"role", "user"}, {"content", question}}})},
          {"ability", "math"},
          {"reward_model", {{"style", "rule"}, {"ground_truth", answer}}},
          {"extra_info", {{"split", "train"}, {"index", index}}}};
}

// `rlwb validate` on the text of graph file `file` with this build's
// catalog: every issue, one a line; "" when it passes.
inline std::string validation_issues(const std::string& text, const std::string& file) {
  std::string all;
  for (const auto& issue : core::validate_experiment(core::load_experiment_text(text, file), app::catalog()))
    all += issue.to_string() + "\n";
  return all;
}

inline void write_jsonl(const std::string& path, const std::vector<nlohmann::json>& rows) {
  std::ofstream out(path);
  for (const auto& r : rows) out << r.dump() << "\n";
}

// Runs `code` with the venv's python (pyarrow imported as pa, pyarrow.parquet
// as pq, json); fails the test with python's output when it fails.
inline void run_python(const std::string& code, const std::vector<std::string>& args = {}) {
  const std::string script =
      (std::filesystem::temp_directory_path() / ("rlwb-dataset-" + std::to_string(getpid()) + ".py"))
          .string();
  std::ofstream(script) << "import json, sys\nimport pyarrow as pa\nimport pyarrow.parquet as pq\n"
                        << code << "\n";
  std::vector<std::string> argv = {script};
  argv.insert(argv.end(), args.begin(), args.end());
  const std::string python = reference_python();
  ProgramOutput r = run_program(python.c_str(), argv, 120);
  std::filesystem::remove(script);
  ASSERT_EQ(r.code, 0) << r.text;
}

// The rows as a Parquet file, through pyarrow's own type inference.
inline void write_parquet(const std::string& path, const std::vector<nlohmann::json>& rows) {
  const std::string json_path = path + ".rows.json";
  std::ofstream(json_path) << nlohmann::json(rows).dump();
  run_python("pq.write_table(pa.Table.from_pylist(json.load(open(sys.argv[1]))), sys.argv[2])",
             {json_path, path});
  std::filesystem::remove(json_path);
}

}  // namespace rlwb::testing
