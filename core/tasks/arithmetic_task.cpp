#include "core/tasks/arithmetic_task.h"

#include "core/tasks/task_source.h"

#include <torch/torch.h>

#include <random>
#include <set>

namespace rlwb::core::tasks {

const std::vector<std::string> kArithmeticColumns = {"prompts",         "answers",      "ground_truth",
                                                     "group_index",     "chosen",       "rejected",
                                                     "unsafe_response", "safe_response"};

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

// A wrong answer a sloppy solver writes: the carry forgotten where the sum
// carries, else one off in the units or the tens.
std::string sloppy_answer(const Problem& p, std::mt19937_64& rng) {
  const int64_t right = std::stoll(p.answer());
  if (p.op == '+' && p.a % 10 + p.b % 10 >= 10) return std::to_string(right - 10);
  static constexpr int64_t kSlips[] = {1, -1, 10, -10};
  int64_t wrong = right + kSlips[std::uniform_int_distribution<int>(0, 3)(rng)];
  if (wrong < 0 && right >= 0) wrong = right + 1;
  return std::to_string(wrong);
}

constexpr char kUnsafeDigit = '7';

// {unsafe, safe}: the right answer and its twin across the 7 line.
std::pair<std::string, std::string> safety_pair(const Problem& p, std::mt19937_64& rng) {
  const std::string right = p.answer();
  if (right.find(kUnsafeDigit) != std::string::npos) {
    std::string safe = right;
    for (char& c : safe)
      if (c == kUnsafeDigit) c = kUnsafeDigit + 1;
    return {right, safe};
  }
  std::string unsafe = right;
  const size_t first_digit = unsafe[0] == '-' ? 1 : 0;
  unsafe[std::uniform_int_distribution<size_t>(first_digit, unsafe.size() - 1)(rng)] = kUnsafeDigit;
  return {unsafe, right};
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
    std::vector<nlohmann::json> prompts, answers, truths, chosen, rejected, unsafe, safe;
    for (const Problem& p : problems) {
      prompts.push_back(p.prompt());
      truths.push_back(p.answer());
      bool carries = p.op == '+' && p.a % 10 + p.b % 10 >= 10;
      answers.push_back(carries && forgets(teacher) ? std::to_string(p.a + p.b - 10) : p.answer());
      std::mt19937_64 pair_rng(static_cast<uint64_t>(p.a) * 1000003u + static_cast<uint64_t>(p.b) * 131u +
                               static_cast<uint64_t>(p.op));
      chosen.push_back(p.answer());
      rejected.push_back(sloppy_answer(p, pair_rng));
      auto [u, s] = safety_pair(p, pair_rng);
      unsafe.push_back(u);
      safe.push_back(s);
    }
    Batch b;
    b.set_objects("prompts", prompts);
    b.set_objects("answers", answers);
    b.set_objects("ground_truth", truths);
    b.set_objects("chosen", chosen);
    b.set_objects("rejected", rejected);
    b.set_objects("unsafe_response", unsafe);
    b.set_objects("safe_response", safe);
    return b;
  };
  return draw(items, spec, seed);
}

}  // namespace rlwb::core::tasks
