#include "core/controller/print_program_task.h"

#include <torch/torch.h>

#include <random>
#include <set>

namespace rlwb::core {

const std::vector<std::string> kPrintProgramColumns = {"prompts", "answers", "tests", "ground_truth",
                                                       "group_index"};

namespace {

struct Settings {
  int64_t max_target = 99, test_size = 20;
  static Settings from(const nlohmann::json& task) {
    Settings s;
    s.max_target = task.value("max_target", s.max_target);
    s.test_size = task.value("test_size", s.test_size);
    if (s.max_target < 1) throw std::runtime_error("task.max_target: must be >= 1");
    if (s.test_size < 0 || s.test_size > (s.max_target + 1) / 2)
      throw std::runtime_error("task.test_size: must be between 0 and half of the " +
                               std::to_string(s.max_target + 1) + " targets (0..max_target)");
    return s;
  }
};

// The held-out targets: a fixed pseudo-random subset, the same for every seed.
std::vector<int64_t> test_targets(const Settings& s) {
  std::mt19937_64 rng(20261130);
  std::uniform_int_distribution<int64_t> target(0, s.max_target);
  std::set<int64_t> seen;
  std::vector<int64_t> out;
  while (static_cast<int64_t>(out.size()) < s.test_size) {
    int64_t t = target(rng);
    if (seen.insert(t).second) out.push_back(t);
  }
  return out;
}

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
  return program_printing(target == 0 || std::bernoulli_distribution(0.5)(rng) ? target + 1 : target - 1, rng);
}

}  // namespace

Batch print_program_task(int64_t step, const nlohmann::json& task, int64_t seed) {
  const Settings s = Settings::from(task);
  const bool test = task.value("split", "train") == "test";
  const int64_t n = test ? 1 : task.value("samples_per_prompt", int64_t{1});
  if (n < 1) throw std::runtime_error("task.samples_per_prompt: must be >= 1");
  const double error = test ? 0.0 : task.value("teacher_error", 0.0);
  if (error < 0 || error > 1) throw std::runtime_error("task.teacher_error: must be in [0, 1]");

  auto held_out = test_targets(s);
  std::vector<int64_t> targets;
  if (test) {
    targets = held_out;
    int64_t size = task.value("batch_size", s.test_size);
    if (size < static_cast<int64_t>(targets.size())) targets.resize(size);
  } else {
    std::set<int64_t> excluded(held_out.begin(), held_out.end());
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(step));
    std::uniform_int_distribution<int64_t> target(0, s.max_target);
    const int64_t size = task.value("batch_size", int64_t{16});
    if (size < 1) throw std::runtime_error("task.batch_size: must be >= 1");
    while (static_cast<int64_t>(targets.size()) < size) {
      int64_t t = target(rng);
      if (!excluded.count(t)) targets.push_back(t);
    }
  }

  std::mt19937_64 teacher_rng(static_cast<uint64_t>(seed) * 7919ULL + static_cast<uint64_t>(step) * 104729ULL + 1);
  std::vector<nlohmann::json> prompts, answers, tests, truths;
  std::vector<int64_t> group;
  for (size_t i = 0; i < targets.size(); ++i)
    for (int64_t k = 0; k < n; ++k) {
      const std::string value = std::to_string(targets[i]);
      prompts.push_back(value);
      answers.push_back(teacher_program(targets[i], error, teacher_rng));
      tests.push_back(nlohmann::json::array({{{"expected", value + "\n"}}}));
      truths.push_back(value);
      group.push_back(static_cast<int64_t>(i));
    }
  Batch b;
  b.set_objects("prompts", prompts);
  b.set_objects("answers", answers);
  b.set_objects("tests", tests);
  b.set_objects("ground_truth", truths);
  b.set_tensor("group_index", torch::tensor(group, torch::kInt64));
  return b;
}

}  // namespace rlwb::core
