#include "core/tasks/dataset_task.h"

#include "core/data/verl_rows.h"
#include "core/tasks/file_read_cache.h"

#include <torch/torch.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <random>

namespace rlwb::core::tasks {

const std::vector<std::string> kDatasetColumns = {"prompts", "answers",    "ground_truth", "data_source",
                                                  "ability", "extra_info", "group_index"};

namespace {

struct Splits {
  std::vector<data::DatasetRow> train, val;
};

// What decides the rows: the settings that select and filter them, and each
// file's identity (a rewritten file is read again).
std::string content_key(const config::DatasetTaskOptions& d) {
  std::string key = d.prompt_key + "|" + std::to_string(d.max_prompt_length) + "|" +
                    std::to_string(d.filter_overlong) + "|" + d.tokenizer.as_written.dump() + "|" +
                    d.tokenizer.path;
  for (const auto* files : {&d.train_files, &d.val_files}) {
    key += "#";
    for (const auto& f : *files) key += file_identity(f) + ";";
  }
  return key;
}

std::vector<data::DatasetRow> read_split(const std::vector<std::string>& files, const std::string& setting,
                                         const config::DatasetTaskOptions& d, const PromptLength& length) {
  std::vector<data::DatasetRow> rows;
  int64_t read = 0, longest = 0;
  for (const auto& path : files) {
    const data::DatasetFile file = data::read_dataset_file(path);
    std::vector<data::DatasetRow> file_rows = data::verl_rows(file, d.prompt_key);
    read += static_cast<int64_t>(file_rows.size());
    for (size_t i = 0; i < file_rows.size(); ++i) {
      if (d.filter_overlong) {
        int64_t tokens = 0;
        try {
          tokens = length(file_rows[i].prompt);
        } catch (const std::exception& e) {
          throw data::DatasetError(file.where(i) + ", column '" + d.prompt_key + "': " + e.what());
        }
        longest = std::max(longest, tokens);
        if (tokens > d.max_prompt_length) continue;
      }
      rows.push_back(std::move(file_rows[i]));
    }
  }
  if (read == 0)
    throw data::DatasetError("task." + setting + ": the files hold no rows; name files with rows in them");
  if (rows.empty())
    throw data::DatasetError("task." + setting + ": every one of the " + std::to_string(read) +
                             " rows has a prompt longer than max_prompt_length " +
                             std::to_string(d.max_prompt_length) + " tokens (the longest has " +
                             std::to_string(longest) + "); raise task.max_prompt_length");
  return rows;
}

// The splits of the files `d` names, read once per content_key.
std::shared_ptr<const Splits> load_splits(FileReadCache<Splits>& cache, const config::DatasetTaskOptions& d,
                                          const PromptLengthOf& length_of) {
  return cache.get(content_key(d), [&] {
    PromptLength length;
    if (d.filter_overlong) length = length_of(d.tokenizer);
    Splits splits;
    splits.train = read_split(d.train_files, "train_files", d, length);
    if (!d.val_files.empty()) splits.val = read_split(d.val_files, "val_files", d, length);
    return splits;
  });
}

// The order of n training rows in epoch `epoch`: the file order, or a
// permutation drawn from (seed, epoch).
std::vector<int64_t> epoch_order(int64_t n, int64_t epoch, bool shuffle, int64_t seed) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), 0);
  if (!shuffle) return order;
  std::mt19937_64 rng(static_cast<uint64_t>(seed) * 1000003ULL + static_cast<uint64_t>(epoch) + 17);
  std::shuffle(order.begin(), order.end(), rng);
  return order;
}

Batch rows_batch(const std::vector<const data::DatasetRow*>& rows) {
  std::vector<nlohmann::json> prompts, answers, truths, sources, abilities, extras;
  for (const auto* r : rows) {
    prompts.push_back(r->prompt);
    answers.push_back(data::demonstration_text(*r));
    truths.push_back(data::ground_truth_text(r->ground_truth));
    sources.push_back(r->data_source);
    abilities.push_back(r->ability);
    extras.push_back(r->extra_info);
  }
  Batch b;
  b.set_objects("prompts", prompts);
  b.set_objects("answers", answers);
  b.set_objects("ground_truth", truths);
  b.set_objects("data_source", sources);
  b.set_objects("ability", abilities);
  b.set_objects("extra_info", extras);
  b.set_tensor("group_index", torch::arange(static_cast<int64_t>(rows.size()), torch::kInt64));
  return b;
}

}  // namespace

TaskSpec dataset_task(PromptLengthOf prompt_length_of) {
  auto cache = std::make_shared<FileReadCache<Splits>>();
  TaskSpec spec;
  spec.columns = kDatasetColumns;
  spec.make = [cache, prompt_length_of](const config::TaskOptions& task, const TaskDraw& draw, int64_t seed) {
    const config::DatasetTaskOptions& d = task.dataset;
    const auto splits = load_splits(*cache, d, prompt_length_of);
    std::vector<const data::DatasetRow*> rows;
    if (draw.test) {
      const auto& val = splits->val;
      const size_t count = draw.batch_size < 0 ? val.size() : std::min(val.size(), size_t(draw.batch_size));
      for (size_t i = 0; i < count; ++i) rows.push_back(&val[i]);
    } else {
      const auto n = static_cast<int64_t>(splits->train.size());
      std::map<int64_t, std::vector<int64_t>> orders;  // the epochs this step touches: one or two
      for (int64_t k = 0; k < draw.batch_size; ++k) {
        const int64_t global = (draw.step - 1) * draw.batch_size + k;
        const int64_t epoch = global / n;
        auto& order = orders[epoch];
        if (order.empty()) order = epoch_order(n, epoch, d.shuffle, seed);
        rows.push_back(&splits->train[static_cast<size_t>(order[static_cast<size_t>(global % n)])]);
      }
    }
    Batch b = rows_batch(rows);
    const int64_t n = draw.test ? 1 : draw.samples_per_prompt;
    return n > 1 ? b.repeat(n, /*interleave=*/true) : b;
  };
  spec.check = [cache, prompt_length_of](const config::TaskOptions& task) {
    load_splits(*cache, task.dataset, prompt_length_of);
  };
  return spec;
}

}  // namespace rlwb::core::tasks
