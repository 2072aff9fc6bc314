#include "core/tasks/humaneval_task.h"

#include "core/data/humaneval_file.h"
#include "core/tasks/file_read_cache.h"

namespace rlwb::core::tasks {

const std::vector<std::string> kHumanEvalColumns = {"prompts",        "answers", "tests",
                                                    "program_prefix", "task_id", "group_index"};

namespace {

using Problems = std::vector<data::HumanEvalProblem>;

// The problems of `task`, checked to leave problems to train on.
std::shared_ptr<const Problems> problems_of(FileReadCache<Problems>& cache,
                                            const config::HumanEvalTaskOptions& h) {
  const std::string path = data::locate_humaneval_file(h.file);
  auto problems = cache.get(file_identity(path), [&] { return data::read_humaneval_file(path); });
  const auto count = static_cast<int64_t>(problems->size());
  if (h.test_size >= count)
    throw data::DatasetError("task.test_size: is " + std::to_string(h.test_size) + ", but " + path +
                             " has only " + std::to_string(count) +
                             " problems; lower test_size so that some are left to train on");
  return problems;
}

Batch problem_rows(const Problems& problems, const std::vector<int64_t>& picked) {
  std::vector<nlohmann::json> prompts, answers, tests, prefixes, ids;
  for (int64_t index : picked) {
    const auto& p = problems[static_cast<size_t>(index)];
    prompts.push_back(p.prompt);
    answers.push_back(p.canonical_solution);
    tests.push_back(nlohmann::json::array({{{"assert", data::humaneval_check_code(p)}}}));
    prefixes.push_back(p.prompt);
    ids.push_back(p.task_id);
  }
  Batch b;
  b.set_objects("prompts", prompts);
  b.set_objects("answers", answers);
  b.set_objects("tests", tests);
  b.set_objects("program_prefix", prefixes);
  b.set_objects("task_id", ids);
  return b;
}

}  // namespace

TaskSpec humaneval_task() {
  auto cache = std::make_shared<FileReadCache<Problems>>();
  TaskSpec spec;
  spec.columns = kHumanEvalColumns;
  spec.make = [cache](const config::TaskOptions& task, const TaskDraw& draw_spec, int64_t seed) {
    const auto problems = problems_of(*cache, task.humaneval);
    const auto count = static_cast<int64_t>(problems->size());
    ItemTask<int64_t> items;
    items.sample = [count](std::mt19937_64& rng) {
      return std::uniform_int_distribution<int64_t>(0, count - 1)(rng);
    };
    items.held_out = [&] {
      return distinct_items<int64_t>(task.humaneval.test_size, 20261204, items.sample);
    };
    items.rows = [&](const std::vector<int64_t>& picked, bool, std::mt19937_64&) {
      return problem_rows(*problems, picked);
    };
    return draw(items, draw_spec, seed);
  };
  spec.check = [cache](const config::TaskOptions& task) { problems_of(*cache, task.humaneval); };
  return spec;
}

}  // namespace rlwb::core::tasks
