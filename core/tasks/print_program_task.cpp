#include "core/tasks/print_program_task.h"

#include "core/tasks/task_source.h"

#include <torch/torch.h>

#include <random>
#include <set>

namespace rlwb::core::tasks {

const std::vector<std::string> kPrintProgramColumns = {"prompts", "answers", "tests", "ground_truth",
                                                       "group_index"};

namespace {

using Settings = config::PrintProgramTaskOptions;

// A program that prints `value`: the literal, a sum, or a product of two
// factors >= 2 when `value` has them.
std::string program_printing(int64_t value, std::mt19937_64& rng) {
  std::vector<std::pair<int64_t, int64_t>> factors;
  for (int64_t a = 2; a * a <= value; ++a)
    if (value % a == 0) factors.push_back({a, value / a});
  int form = std::uniform_int_distribution<int>(0, factors.empty() ? 1 : 2)(rng);
  if (form == 1) {
    int64_t a = std::uniform_int_distribution<int64_t>(0, value)(rng);
    return "print(" + std::to_string(a) + "+" + std::to_string(value - a) + ")";
  }
  if (form == 2) {
    auto [a, b] = factors[std::uniform_int_distribution<size_t>(0, factors.size() - 1)(rng)];
    return "print(" + std::to_string(a) + "*" + std::to_string(b) + ")";
  }
  return "print(" + std::to_string(value) + ")";
}

// The teacher's demonstration: right, or (with probability `error`) a
// program for a neighbouring value, or one without its closing parenthesis.
std::string teacher_program(int64_t target, double error, std::mt19937_64& rng) {
  if (!std::bernoulli_distribution(error)(rng)) return program_printing(target, rng);
  if (std::bernoulli_distribution(0.5)(rng)) {
    std::string p = program_printing(target, rng);
    return p.substr(0, p.size() - 1);  // SyntaxError
  }
  return program_printing(target == 0 || std::bernoulli_distribution(0.5)(rng) ? target + 1 : target - 1,
                          rng);
}

}  // namespace

Batch print_program_task(const config::TaskOptions& task, const TaskDraw& spec, int64_t seed) {
  const Settings& s = task.print_program;
  ItemTask<int64_t> items;
  items.sample = [&s](std::mt19937_64& rng) {
    return std::uniform_int_distribution<int64_t>(0, s.max_target)(rng);
  };
  // The held-out targets: a fixed pseudo-random subset, the same for every seed.
  items.held_out = [&] { return distinct_items<int64_t>(s.test_size, 20261130, items.sample); };
  items.rows = [&s](const std::vector<int64_t>& targets, bool test, std::mt19937_64& teacher) {
    const double error = test ? 0.0 : s.teacher_error;
    std::vector<nlohmann::json> prompts, answers, tests, truths;
    for (int64_t target : targets) {
      const std::string value = std::to_string(target);
      prompts.push_back(value);
      answers.push_back(teacher_program(target, error, teacher));
      tests.push_back(nlohmann::json::array({{{"expected", value + "\n"}}}));
      truths.push_back(value);
    }
    Batch b;
    b.set_objects("prompts", prompts);
    b.set_objects("answers", answers);
    b.set_objects("tests", tests);
    b.set_objects("ground_truth", truths);
    return b;
  };
  return draw(items, spec, seed);
}

}  // namespace rlwb::core::tasks
