#include "core/controller/arithmetic_task.h"

#include <torch/torch.h>

#include <random>
#include <set>

namespace rlwb::core {

const std::vector<std::string> kArithmeticColumns = {"prompts", "answers", "ground_truth", "group_index"};

namespace {

struct Problem {
  int64_t a, b;
  char op;
  std::string prompt() const { return std::to_string(a) + op + std::to_string(b) + "="; }
  std::string answer() const {
    switch (op) {
      case '-': return std::to_string(a - b);
      case '*': return std::to_string(a * b);
      default: return std::to_string(a + b);
    }
  }
  bool operator<(const Problem& o) const { return std::tie(a, b, op) < std::tie(o.a, o.b, o.op); }
};

struct Settings {
  int64_t max_operand, test_size;
  std::string ops;
  static Settings from(const nlohmann::json& task) {
    Settings s;
    s.max_operand = task.value("max_operand", int64_t{99});
    s.test_size = task.value("test_size", int64_t{200});
    for (auto& op : task.value("ops", std::vector<std::string>{"+"})) {
      if (op != "+" && op != "-" && op != "*")
        throw std::runtime_error("task.ops: '" + op + "' is not one of +, -, *");
      s.ops += op;
    }
    if (s.max_operand < 1) throw std::runtime_error("task.max_operand: must be >= 1");
    int64_t space = (s.max_operand + 1) * (s.max_operand + 1) * static_cast<int64_t>(s.ops.size());
    if (s.test_size < 0 || s.test_size > space / 2)
      throw std::runtime_error("task.test_size: must be between 0 and half of the " + std::to_string(space) +
                               " possible problems");
    return s;
  }
};

// The held-out problems: a fixed pseudo-random subset, the same for every seed.
std::vector<Problem> test_problems(const Settings& s) {
  std::mt19937_64 rng(20261129);
  std::uniform_int_distribution<int64_t> operand(0, s.max_operand);
  std::uniform_int_distribution<size_t> op(0, s.ops.size() - 1);
  std::set<Problem> seen;
  std::vector<Problem> out;
  while (static_cast<int64_t>(out.size()) < s.test_size) {
    Problem p{operand(rng), operand(rng), s.ops[op(rng)]};
    if (seen.insert(p).second) out.push_back(p);
  }
  return out;
}

}  // namespace

Batch arithmetic_task(int64_t step, const nlohmann::json& task, int64_t seed) {
  const Settings s = Settings::from(task);
  const bool test = task.value("split", "train") == "test";
  const int64_t n = test ? 1 : task.value("samples_per_prompt", int64_t{1});
  if (n < 1) throw std::runtime_error("task.samples_per_prompt: must be >= 1");
  auto held_out = test_problems(s);
  std::vector<Problem> problems;
  if (test) {
    problems = held_out;
    int64_t size = task.value("batch_size", s.test_size);
    if (size < static_cast<int64_t>(problems.size())) problems.resize(size);
  } else {
    std::set<Problem> excluded(held_out.begin(), held_out.end());
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(step));
    std::uniform_int_distribution<int64_t> operand(0, s.max_operand);
    std::uniform_int_distribution<size_t> op(0, s.ops.size() - 1);
    const int64_t size = task.value("batch_size", int64_t{16});
    while (static_cast<int64_t>(problems.size()) < size) {
      Problem p{operand(rng), operand(rng), s.ops[op(rng)]};
      if (!excluded.count(p)) problems.push_back(p);
    }
  }
  // The demonstrations come from a sloppy teacher that forgets to carry the
  // one from the units into the tens with probability teacher_carry_error
  // (training split only); ground_truth is always right.
  const double carry_error = test ? 0.0 : task.value("teacher_carry_error", 0.0);
  if (carry_error < 0 || carry_error > 1) throw std::runtime_error("task.teacher_carry_error: must be in [0, 1]");
  std::mt19937_64 teacher_rng(static_cast<uint64_t>(seed) * 7919ULL + static_cast<uint64_t>(step) * 104729ULL + 1);
  std::bernoulli_distribution forgets(carry_error);
  std::vector<nlohmann::json> prompts, answers, truths;
  std::vector<int64_t> group;
  for (size_t i = 0; i < problems.size(); ++i)
    for (int64_t k = 0; k < n; ++k) {
      const Problem& p = problems[i];
      prompts.push_back(p.prompt());
      truths.push_back(p.answer());
      bool carries = p.op == '+' && p.a % 10 + p.b % 10 >= 10;
      answers.push_back(carries && forgets(teacher_rng) ? std::to_string(p.a + p.b - 10) : p.answer());
      group.push_back(static_cast<int64_t>(i));
    }
  Batch b;
  b.set_objects("prompts", prompts);
  b.set_objects("answers", answers);
  b.set_objects("ground_truth", truths);
  b.set_tensor("group_index", torch::tensor(group, torch::kInt64));
  return b;
}

}  // namespace rlwb::core
