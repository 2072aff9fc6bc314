// Shared by yaml_edit_test.cpp and the editor's graph_document_test.cpp
// (and auto_layout_test.cpp, for the file list): the experiment files, and
// the checks that a saved edit changed only what it had to.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "tests/test_paths.h"

namespace rlwb::core::testing {

// Every experiments/*.yaml, sorted.
inline std::vector<std::string> experiment_files() {
  std::vector<std::string> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(rlwb::testing::kSourceDir) + "/experiments"))
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

inline std::string file_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::stringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// The lines of `before` that `after` does not keep: those outside the
// longest common subsequence of lines, so a kept line is also in its order.
inline std::vector<std::string> lines_not_kept(const std::string& before, const std::string& after) {
  const auto a = lines_of(before), b = lines_of(after);
  std::vector<std::vector<int>> common(a.size() + 1, std::vector<int>(b.size() + 1, 0));
  for (std::size_t i = a.size(); i-- > 0;)
    for (std::size_t j = b.size(); j-- > 0;)
      common[i][j] = a[i] == b[j] ? common[i + 1][j + 1] + 1 : std::max(common[i + 1][j], common[i][j + 1]);
  std::vector<std::string> gone;
  for (std::size_t i = 0, j = 0; i < a.size();) {
    if (j < b.size() && a[i] == b[j])
      ++i, ++j;
    else if (j < b.size() && common[i][j + 1] >= common[i + 1][j])
      ++j;
    else
      gone.push_back(a[i++]);
  }
  return gone;
}

inline bool is_comment_line(const std::string& line) {
  auto first = line.find_first_not_of(' ');
  return first != std::string::npos && line[first] == '#';
}

// `saved` keeps every comment line of `original` and every other line but
// at most `changed` of them, in their order.
inline void expect_lines_kept(const std::string& original, const std::string& saved, const std::string& file,
                              std::size_t changed) {
  const auto gone = lines_not_kept(original, saved);
  std::string listed;
  for (const auto& line : gone) listed += "\n  " + line;
  for (const auto& line : gone) EXPECT_FALSE(is_comment_line(line)) << "lost a comment: " << line;
  EXPECT_LE(gone.size(), changed) << file << ": lines not kept:" << listed << "\nsaved:\n" << saved;
}

// `saved` (the save of `edited`, first loaded from `original` in `file`)
// reloads to the edited experiment and keeps the original's lines as
// expect_lines_kept() says.
inline void expect_minimal_save(const std::string& original, const std::string& saved,
                                const std::string& file, const Experiment& edited, std::size_t changed) {
  const Experiment wanted = load_experiment_text(experiment_to_yaml(edited), file);
  Experiment reloaded;
  ASSERT_NO_THROW(reloaded = load_experiment_text(saved, file)) << saved;
  EXPECT_TRUE(same_content(reloaded, wanted)) << "saved:\n"
                                              << saved << "\nwanted:\n"
                                              << experiment_to_yaml(edited);
  expect_lines_kept(original, saved, file, changed);
}

}  // namespace rlwb::core::testing
