// What every built-in task source shares, so that each task states only its
// items and how an item becomes a row:
//   - a held-out split that depends only on the task's settings (never on
//     the seed), so every run of an experiment evaluates on the same rows;
//   - training items drawn per step from a generator seeded by (seed, step),
//     skipping the held-out items, so no held-out prompt is ever trained on;
//   - each prompt's row repeated samples_per_prompt times in a row
//     (Batch::repeat) with `group_index`, the prompt's index in the step
//     (GRPO's groups).
// Used by arithmetic_task.cpp and print_program_task.cpp; the registry of
// tasks is tasks.h.
#pragma once

#include "core/batch/batch.h"
#include "core/config/task_options.h"

#include <torch/torch.h>

#include <functional>
#include <random>
#include <set>
#include <vector>

namespace rlwb::core::tasks {

// Which rows a task source draws: `batch_size` prompts of the training
// split for step `step`, each repeated samples_per_prompt times, or the
// first `batch_size` rows of the held-out split (test: one sample each).
struct TaskDraw {
  int64_t step = 0;
  bool test = false;
  int64_t batch_size = 16;
  int64_t samples_per_prompt = 1;
  bool operator==(const TaskDraw&) const = default;
};

// A task of distinct items (problems, targets). Item needs operator<.
template <typename Item>
struct ItemTask {
  // The held-out items: distinct, and the same for every seed.
  std::function<std::vector<Item>()> held_out;
  // One training item from the step's generator.
  std::function<Item(std::mt19937_64&)> sample;
  // One row per item; `teacher` draws the demonstrations' mistakes (only on
  // the training split: `test` rows are always right).
  std::function<Batch(const std::vector<Item>& items, bool test, std::mt19937_64& teacher)> rows;
};

// `count` distinct items from `sample` with a fixed generator: a held-out set.
template <typename Item>
std::vector<Item> distinct_items(int64_t count, uint64_t rng_seed,
                                 const std::function<Item(std::mt19937_64&)>& sample) {
  std::mt19937_64 rng(rng_seed);
  std::set<Item> seen;
  std::vector<Item> out;
  while (static_cast<int64_t>(out.size()) < count) {
    Item item = sample(rng);
    if (seen.insert(item).second) out.push_back(item);
  }
  return out;
}

template <typename Item>
Batch draw(const ItemTask<Item>& task, const TaskDraw& d, int64_t seed) {
  std::vector<Item> held_out = task.held_out();
  std::vector<Item> items;
  if (d.test) {
    items = held_out;
    if (d.batch_size < static_cast<int64_t>(items.size())) items.resize(d.batch_size);
  } else {
    const std::set<Item> excluded(held_out.begin(), held_out.end());
    std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(d.step));
    while (static_cast<int64_t>(items.size()) < d.batch_size) {
      Item item = task.sample(rng);
      if (!excluded.count(item)) items.push_back(item);
    }
  }
  std::mt19937_64 teacher(static_cast<uint64_t>(seed) * 7919ULL + static_cast<uint64_t>(d.step) * 104729ULL +
                          1);
  Batch b = task.rows(items, d.test, teacher);
  b.set_tensor("group_index", torch::arange(static_cast<int64_t>(items.size()), torch::kInt64));
  const int64_t n = d.test ? 1 : d.samples_per_prompt;
  return n > 1 ? b.repeat(n, /*interleave=*/true) : b;
}

}  // namespace rlwb::core::tasks
