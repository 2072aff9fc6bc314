#include "core/data/verl_rows.h"

namespace rlwb::core::data {
namespace {

std::string columns_of(const nlohmann::json& row) {
  std::string all;
  for (const auto& [key, value] : row.items()) all += (all.empty() ? "" : ", ") + key;
  return all.empty() ? "none" : all;
}

[[noreturn]] void fail(const DatasetFile& file, size_t row, const std::string& column,
                       const std::string& what, const std::string& fix) {
  throw DatasetError(file.where(row) + ", column '" + column + "': " + what + "; " + fix);
}

const nlohmann::json& column(const DatasetFile& file, size_t row, const std::string& name,
                             const std::string& fix) {
  const auto& r = file.rows[row];
  auto it = r.find(name);
  if (it == r.end() || it->is_null())
    fail(file, row, name, "missing (the row's columns: " + columns_of(r) + ")", fix);
  return *it;
}

std::string text(const DatasetFile& file, size_t row, const std::string& name, const nlohmann::json& value) {
  if (!value.is_string()) fail(file, row, name, "is " + value.dump() + ", not text", "write it as a string");
  return value.get<std::string>();
}

void check_messages(const DatasetFile& file, size_t row, const std::string& key,
                    const nlohmann::json& prompt) {
  const std::string fix =
      "a prompt is text or a list of chat messages [{role: user, content: \"...\"}, ...]; set "
      "task.prompt_key "
      "to the column that holds it";
  if (prompt.is_string()) {
    if (prompt.get<std::string>().empty()) fail(file, row, key, "is empty text", fix);
    return;
  }
  if (!prompt.is_array() || prompt.empty())
    fail(file, row, key, "is " + prompt.dump() + (prompt.is_array() ? ", an empty list" : ""), fix);
  for (size_t m = 0; m < prompt.size(); ++m) {
    const auto& message = prompt[m];
    const bool ok = message.is_object() && message.contains("role") && message["role"].is_string() &&
                    message.contains("content") && message["content"].is_string();
    if (!ok)
      fail(file, row, key,
           "message " + std::to_string(m + 1) + " is " + message.dump() + ", not {role: text, content: text}",
           fix);
  }
}

}  // namespace

std::vector<DatasetRow> verl_rows(const DatasetFile& file, const std::string& prompt_key) {
  std::vector<DatasetRow> rows;
  rows.reserve(file.rows.size());
  for (size_t i = 0; i < file.rows.size(); ++i) {
    DatasetRow r;
    r.prompt = column(file, i, prompt_key, "set task.prompt_key to the column that holds the prompt");
    check_messages(file, i, prompt_key, r.prompt);
    r.data_source =
        text(file, i, "data_source",
             column(file, i, "data_source", "name the row's source (it picks the reward module)"));
    const auto& row = file.rows[i];
    if (row.contains("ability") && !row["ability"].is_null())
      r.ability = text(file, i, "ability", row["ability"]);
    const auto& reward =
        column(file, i, "reward_model", "write reward_model: {style: rule, ground_truth: ...}");
    if (!reward.is_object())
      fail(file, i, "reward_model", "is " + reward.dump() + ", not a struct",
           "write reward_model: {style: rule, ground_truth: ...}");
    if (!reward.contains("ground_truth") || reward["ground_truth"].is_null())
      fail(file, i, "reward_model.ground_truth", "missing",
           "write the reference answer the reward compares with");
    r.ground_truth = reward["ground_truth"];
    if (reward.contains("style") && !reward["style"].is_null())
      r.reward_style = text(file, i, "reward_model.style", reward["style"]);
    if (row.contains("extra_info")) r.extra_info = row["extra_info"];
    rows.push_back(std::move(r));
  }
  return rows;
}

std::string ground_truth_text(const nlohmann::json& ground_truth) {
  return ground_truth.is_string() ? ground_truth.get<std::string>() : ground_truth.dump();
}

std::string demonstration_text(const DatasetRow& row) {
  if (row.extra_info.is_object() && row.extra_info.contains("answer") && !row.extra_info["answer"].is_null())
    return ground_truth_text(row.extra_info["answer"]);
  return ground_truth_text(row.ground_truth);
}

}  // namespace rlwb::core::data
