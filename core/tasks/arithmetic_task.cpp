#include "core/tasks/arithmetic_task.h"

#include "core/tasks/task_source.h"

#include <torch/torch.h>

#include <random>
#include <set>

namespace rlwb::core::tasks {

const std::vector<std::string> kArithmeticColumns = {"prompts", "answers", "ground_truth", "group_index"};

namespace {

struct Problem {
  int64_t a, b;
  char op;
  std::string prompt() const { return std::to_string(a) + op + std::to_string(b) + "="; }
  std::string answer() const {
    switch (op) {
      case '-':
        return std::to_string(a - b);
      case '*':
        return std::to_string(a * b);
      default:
        return std::to_string(a + b);
    }
  }
  bool operator<(const Problem& o) const { return std::tie(a, b, op) < std::tie(o.a, o.b, o.op); }
};

// The settings as the generator uses them (checked by core/config).
struct Settings {
  int64_t max_operand, test_size;
  std::string ops;
  static Settings from(const config::ArithmeticTaskOptions& task) {
    Settings s{task.max_operand, task.test_size, ""};
    for (const auto& op : task.ops) s.ops += op;
    return s;
  }
};

Problem random_problem(const Settings& s, std::mt19937_64& rng) {
  std::uniform_int_distribution<int64_t> operand(0, s.max_operand);
  std::uniform_int_distribution<size_t> op(0, s.ops.size() - 1);
  // Evaluation order of the operands is fixed (a, then b, then op).
  const int64_t a = operand(rng), b = operand(rng);
  return Problem{a, b, s.ops[op(rng)]};
}

}  // namespace

Batch arithmetic_task(const config::TaskOptions& task, const TaskDraw& spec, int64_t seed) {
  const Settings s = Settings::from(task.arithmetic);
  ItemTask<Problem> items;
  items.sample = [&s](std::mt19937_64& rng) { return random_problem(s, rng); };
  // The held-out problems: a fixed pseudo-random subset, the same for every seed.
  items.held_out = [&] { return distinct_items<Problem>(s.test_size, 20261129, items.sample); };
  // The demonstrations come from a sloppy teacher that forgets to carry the
  // one from the units into the tens with probability teacher_carry_error
  // (training split only); ground_truth is always right.
  const double carry_error = task.arithmetic.teacher_carry_error;
  items.rows = [carry_error](const std::vector<Problem>& problems, bool test, std::mt19937_64& teacher) {
    std::bernoulli_distribution forgets(test ? 0.0 : carry_error);
    std::vector<nlohmann::json> prompts, answers, truths;
    for (const Problem& p : problems) {
      prompts.push_back(p.prompt());
      truths.push_back(p.answer());
      bool carries = p.op == '+' && p.a % 10 + p.b % 10 >= 10;
      answers.push_back(carries && forgets(teacher) ? std::to_string(p.a + p.b - 10) : p.answer());
    }
    Batch b;
    b.set_objects("prompts", prompts);
    b.set_objects("answers", answers);
    b.set_objects("ground_truth", truths);
    return b;
  };
  return draw(items, spec, seed);
}

}  // namespace rlwb::core::tasks
