// `rlwb validate` on an experiment of task "dataset": the files are read
// and checked before anything starts, and the task's settings are typed
// like every other section's.
#include "tests/core/data/dataset_test_support.h"

#include <gmock/gmock.h>

using namespace rlwb::core;
using rlwb::testing::DatasetDir;
using ::testing::HasSubstr;

namespace {

std::string issues_of(const std::string& task) {
  const std::string text = R"(
name: dataset-check
pools: {p: {workers: 1, device: cpu}}
models:
  actor: {role: actor, pool: p, config: {model: {hidden_size: 16, num_layers: 1, num_heads: 2}, tokenizer: char}}
rewards: {math: {type: math}}
task: )" + task + R"(
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses, response_mask, response_text]}
  - {id: reward, call: math.score, in: [response_text, ground_truth, response_mask], out: [token_level_scores, reward_details]}
)";
  return rlwb::testing::validation_issues(text, "dataset.yaml");
}

TEST(DatasetValidate, AGoodDatasetPassesAndItsColumnsFeedTheNodes) {
  DatasetDir dir("rlwb-dataset-validate");
  std::vector<nlohmann::json> rows = {rlwb::testing::verl_row("1+1=", "2", 0)};
  rows[0]["prompt"] = "1+1=";  // text prompts suit the char tokenizer
  rlwb::testing::write_jsonl(dir.file("train.jsonl"), rows);
  EXPECT_EQ(issues_of("{name: dataset, train_files: [" + dir.file("train.jsonl") + "]}"), "");
}

TEST(DatasetValidate, BadFilesAndSettingsAreIssuesBeforeAnythingStarts) {
  DatasetDir dir("rlwb-dataset-validate-bad");
  EXPECT_THAT(issues_of("{name: dataset, train_files: [" + dir.file("none.parquet") + "]}"),
              HasSubstr("none.parquet: no such file"));
  EXPECT_THAT(issues_of("{name: dataset}"), HasSubstr("task.train_files: is missing"));
  EXPECT_THAT(issues_of("{name: dataset, train_file: [a.parquet]}"), HasSubstr("train_file"));
  // Chat messages with a char tokenizer: the actor could not encode them.
  rlwb::testing::write_jsonl(dir.file("chat.jsonl"), {rlwb::testing::verl_row("1+1=", "2", 0)});
  EXPECT_THAT(issues_of("{name: dataset, train_files: [" + dir.file("chat.jsonl") + "]}"),
              HasSubstr("chat.jsonl line 1, column 'prompt'"));
  // A setting outside its range is the typed check's, as in every section.
  EXPECT_THAT(
      issues_of("{name: dataset, train_files: [" + dir.file("chat.jsonl") + "], max_prompt_length: 0}"),
      HasSubstr("max_prompt_length"));
}

}  // namespace
