// Task "dataset" (core/tasks/dataset_task.h): which rows a step draws, the
// held-out split, the overlong filter, and the errors that stop a run
// before anything starts.
#include "core/tasks/dataset_task.h"

#include "app/registries.h"
#include "core/data/dataset_file.h"
#include "tests/core/data/dataset_test_support.h"

#include <gmock/gmock.h>

#include <set>
#include <thread>

using namespace rlwb::core;
using rlwb::testing::DatasetDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

// A counter that needs no tokenizer: the characters of the messages.
tasks::PromptLength count_characters(const config::TokenizerOptions&) {
  return [](const nlohmann::json& prompt) {
    int64_t n = 0;
    for (const auto& m : prompt) n += static_cast<int64_t>(m["content"].get<std::string>().size());
    return n;
  };
}

// n rows "q<i>" -> "<i>" in `path` (JSON Lines).
void write_rows(const std::string& path, int n, int first = 0) {
  std::vector<nlohmann::json> rows;
  for (int i = first; i < first + n; ++i)
    rows.push_back(rlwb::testing::verl_row("q" + std::to_string(i), std::to_string(i), i));
  rlwb::testing::write_jsonl(path, rows);
}

config::TaskOptions dataset_options(const DatasetDir& dir, bool shuffle) {
  config::TaskOptions o;
  o.name = "dataset";
  o.dataset.train_files = {dir.file("train.jsonl")};
  o.dataset.val_files = {dir.file("val.jsonl")};
  o.dataset.shuffle = shuffle;
  return o;
}

std::vector<std::string> truths(const Batch& b) {
  std::vector<std::string> out;
  for (const auto& t : b.objects("ground_truth")) out.push_back(t.get<std::string>());
  return out;
}

TEST(DatasetTask, StepsWalkTheFileInOrderAndWrapIntoTheNextEpoch) {
  DatasetDir dir("rlwb-dataset-order");
  write_rows(dir.file("train.jsonl"), 5);
  write_rows(dir.file("val.jsonl"), 3, 100);
  const auto task = tasks::dataset_task(count_characters);
  const auto o = dataset_options(dir, /*shuffle=*/false);
  EXPECT_EQ(truths(task.make(o, {1, false, 2, 1}, 1)), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(truths(task.make(o, {3, false, 2, 1}, 1)), (std::vector<std::string>{"4", "0"}));
  // GRPO groups: each prompt repeated in a row, group_index its place.
  const Batch grouped = task.make(o, {1, false, 2, 3}, 1);
  EXPECT_EQ(truths(grouped), (std::vector<std::string>{"0", "0", "0", "1", "1", "1"}));
  EXPECT_TRUE(grouped.tensor("group_index").equal(torch::tensor({0, 0, 0, 1, 1, 1}, torch::kInt64)));
  EXPECT_EQ(grouped.objects("data_source")[0], "openai/gsm8k");
  EXPECT_EQ(grouped.objects("prompts")[0][0]["content"], "q0");
  EXPECT_EQ(grouped.objects("answers")[0], "0");  // no extra_info.answer: the ground truth
  // The held-out split: every row (batch_size -1), or the first ones.
  EXPECT_EQ(truths(task.make(o, {1, true, -1, 8}, 1)), (std::vector<std::string>{"100", "101", "102"}));
  EXPECT_EQ(truths(task.make(o, {1, true, 2, 8}, 1)), (std::vector<std::string>{"100", "101"}));
}

TEST(DatasetTask, ShuffleDrawsEachEpochInANewOrderThatTheSeedFixes) {
  DatasetDir dir("rlwb-dataset-shuffle");
  write_rows(dir.file("train.jsonl"), 40);
  write_rows(dir.file("val.jsonl"), 1);
  const auto task = tasks::dataset_task(count_characters);
  const auto o = dataset_options(dir, /*shuffle=*/true);
  auto epoch = [&](int64_t e, int64_t seed) {
    std::vector<std::string> rows;
    for (int64_t s = 1 + 4 * e; s <= 4 * (e + 1); ++s)
      for (auto& t : truths(task.make(o, {s, false, 10, 1}, seed))) rows.push_back(t);
    return rows;
  };
  const auto first = epoch(0, 1), second = epoch(1, 1);
  EXPECT_EQ(std::set<std::string>(first.begin(), first.end()).size(), 40u);  // every row once
  EXPECT_EQ(std::set<std::string>(second.begin(), second.end()).size(), 40u);
  EXPECT_NE(first, second);
  EXPECT_EQ(first, epoch(0, 1));  // the same seed, the same order
  EXPECT_NE(first, epoch(0, 2));
}

TEST(DatasetTask, OverlongPromptsAreDroppedAndAnEmptySplitIsAnError) {
  DatasetDir dir("rlwb-dataset-overlong");
  write_rows(dir.file("train.jsonl"), 12);  // "q0".."q9" are 2 characters, "q10", "q11" are 3
  write_rows(dir.file("val.jsonl"), 2, 5);
  const auto task = tasks::dataset_task(count_characters);
  auto o = dataset_options(dir, false);
  o.dataset.max_prompt_length = 2;
  const auto drawn = truths(task.make(o, {2, false, 10, 1}, 1));  // rows 10..19 of a 10-row epoch
  EXPECT_EQ(drawn, (std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}));
  o.dataset.filter_overlong = false;
  EXPECT_EQ(truths(task.make(o, {2, false, 10, 1}, 1))[0], "10");

  o.dataset.filter_overlong = true;
  o.dataset.max_prompt_length = 1;
  try {
    task.check(o);
    FAIL() << "every training prompt is overlong";
  } catch (const data::DatasetError& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("task.train_files"), HasSubstr("12 rows"), HasSubstr("longest has 3"),
                      HasSubstr("raise task.max_prompt_length")));
  }
  std::ofstream(dir.file("val.jsonl")) << "\n";
  o.dataset.max_prompt_length = 10;
  try {
    task.check(o);
    FAIL() << "the held-out file has no rows";
  } catch (const data::DatasetError& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("task.val_files"), HasSubstr("no rows")));
  }
}

TEST(DatasetTask, ARewrittenFileIsReadAgain) {
  DatasetDir dir("rlwb-dataset-reread");
  write_rows(dir.file("train.jsonl"), 2);
  write_rows(dir.file("val.jsonl"), 1);
  const auto task = tasks::dataset_task(count_characters);
  const auto o = dataset_options(dir, false);
  EXPECT_EQ(truths(task.make(o, {1, false, 1, 1}, 1)), (std::vector<std::string>{"0"}));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a later modification time
  write_rows(dir.file("train.jsonl"), 3, 7);
  EXPECT_EQ(truths(task.make(o, {1, false, 1, 1}, 1)), (std::vector<std::string>{"7"}));
}

// The build's task counts tokens as the actor will: through its tokenizer
// and chat template. A char tokenizer has no template for chat messages,
// which the check says, naming the row, before any worker starts.
TEST(DatasetTask, TheBuildsTaskCountsTokensThroughTheActorsChatTemplate) {
  DatasetDir dir("rlwb-dataset-tokens");
  write_rows(dir.file("train.jsonl"), 3);
  write_rows(dir.file("val.jsonl"), 1);
  const auto& task = rlwb::app::task_sources().at("dataset");
  auto o = dataset_options(dir, false);
  try {
    task.check(o);
    FAIL() << "a char tokenizer cannot render chat messages";
  } catch (const data::DatasetError& e) {
    EXPECT_THAT(std::string(e.what()), AllOf(HasSubstr("train.jsonl line 1"), HasSubstr("column 'prompt'"),
                                             HasSubstr("no chat template")));
  }
  o.dataset.tokenizer.kind = config::TokenizerOptions::Kind::kFile;
  o.dataset.tokenizer.path =
      std::string(rlwb::testing::kSourceDir) + "/experiments/data/arithmetic/tokenizer";
  o.dataset.max_prompt_length = 2;  // "q0" is 2 byte tokens; "q10" would be 3
  EXPECT_NO_THROW(task.check(o));
  o.dataset.max_prompt_length = 1;
  EXPECT_THROW(task.check(o), data::DatasetError);
}

}  // namespace
