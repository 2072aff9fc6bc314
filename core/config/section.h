// Reading one map of the graph file into a typed option struct, with the
// checks every setting needs, so that each struct's parse states only its
// keys, their defaults and their docs:
//   - a key the map does not know is an error that names the key path, its
//     line, the keys that exist there and a did-you-mean (a typo must never
//     run silently with the default);
//   - a value of the wrong type, out of range, or an unknown enum name is an
//     error that names the key, the line, the value and what is allowed;
//   - an absent key keeps the field's value: the struct's member initialiser
//     is the one documented default of the setting.
// Problems are collected, not thrown, so `rlwb validate` lists them all; a
// parse that must succeed (the controller, the worker) calls throw_if_any().
// The same reads, run over an empty map with a SettingsDoc attached, list
// every setting with its type, default and meaning (`rlwb settings`).
//
// Used by the option structs in core/config/ (model_options, task_options,
// trainer_options); the model is rewards/modules/reward_config.h.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rlwb::core::config {

// One bad setting. `path` is the dotted key path ("models.actor.config.optim.lr").
struct ConfigProblem {
  std::string path;
  int line = 0;  // 1-based line in the graph file, 0 when unknown
  std::string message;
  std::string hint;
  std::string to_string() const;  // "line 12: models.actor...: message (hint: ...)"
};

class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<ConfigProblem> problems);
  const std::vector<ConfigProblem>& problems() const { return problems_; }

 private:
  std::vector<ConfigProblem> problems_;
};

// One documented setting, for the generated reference (docs/settings.md).
struct SettingDoc {
  std::string path, type, default_value, doc;
};
// Settings in the order they were read; one entry per path.
struct SettingsDoc {
  std::vector<SettingDoc> settings;
  void add(SettingDoc doc);
  std::string markdown() const;  // one table per top-level section
};

// What a parse writes to: the problems found, where keys were written, and
// optionally the settings reference.
class ParseContext {
 public:
  // `lines`: dotted key path -> line (Experiment::lines); may be null.
  explicit ParseContext(const std::map<std::string, int>* lines = nullptr, SettingsDoc* doc = nullptr)
      : lines_(lines), doc_(doc) {}
  int line_of(const std::string& path) const;  // the path's line, else its nearest ancestor's
  void add(const std::string& path, std::string message, std::string hint);
  const std::vector<ConfigProblem>& problems() const { return problems_; }
  bool ok() const { return problems_.empty(); }
  void throw_if_any() const;
  SettingsDoc* doc() const { return doc_; }

 private:
  const std::map<std::string, int>* lines_;
  SettingsDoc* doc_;
  std::vector<ConfigProblem> problems_;
};

// Allowed range of a number. Build with at_least(), above(), between().
struct Range {
  std::optional<double> min, max;
  bool min_exclusive = false;
  std::string describe() const;  // ">= 0", "> 0", "in [0, 1]"
};
Range at_least(double min);
Range above(double min);
Range between(double min, double max);

std::string show_value(const nlohmann::json& value);  // "hot", 3, [1, 2]
// " Did you mean 'x'?" for a text close to one of `candidates`, else "".
std::string did_you_mean_hint(const nlohmann::json& value, const std::vector<std::string>& candidates);

// An enum's names, as written in the graph file.
template <typename E>
using EnumNames = std::vector<std::pair<std::string, E>>;

// One map of the file. Construct, read every key it may hold, then finish()
// (the destructor finishes too): keys that were never read are unknown.
class Section {
 public:
  // `value` may be null or absent (nullptr): then every setting keeps its
  // default. Anything else that is not a map is a problem at `path`.
  Section(const nlohmann::json* value, std::string path, ParseContext& ctx);
  ~Section();
  Section(const Section&) = delete;
  Section& operator=(const Section&) = delete;
  Section(Section&&) noexcept;

  Section& integer(const char* key, int64_t& field, std::string_view doc, Range range = {});
  Section& integer(const char* key, int& field, std::string_view doc, Range range = {});
  // Absent keeps the field; null (or absent with no default) leaves it empty.
  Section& integer(const char* key, std::optional<int64_t>& field, std::string_view doc, Range range = {});
  Section& number(const char* key, double& field, std::string_view doc, Range range = {});
  Section& number(const char* key, std::optional<double>& field, std::string_view doc, Range range = {});
  Section& flag(const char* key, bool& field, std::string_view doc);
  Section& text(const char* key, std::string& field, std::string_view doc);
  // A list of text; a lone text is read as a list of one.
  Section& names(const char* key, std::vector<std::string>& field, std::string_view doc);
  Section& numbers(const char* key, std::vector<double>& field, std::string_view doc, size_t exact_size = 0);
  template <typename E>
  Section& choice(const char* key, E& field, const EnumNames<E>& names, std::string_view doc);
  // A nested map (absent: an empty one, so its settings keep their defaults).
  Section child(const char* key, std::string_view doc);
  // Marks `key` known and returns its value (nullptr when absent), for a
  // value another parser reads (node lists, reward configs).
  const nlohmann::json* raw(const char* key, std::string_view type, std::string_view doc);

  bool has(const char* key) const;
  std::string path(const std::string& key) const;  // "<path>.<key>"
  const std::string& path() const { return path_; }
  // A problem about `key` (or about the map itself when key is empty).
  void fail(const std::string& key, std::string message, std::string hint);
  ParseContext& context() { return *ctx_; }
  void finish();

 private:
  const nlohmann::json* value_of(const char* key, std::string_view type, std::string_view doc,
                                 const std::string& default_value);
  void wrong_type(const char* key, const nlohmann::json& value, std::string_view wanted,
                  const std::string& example);
  void check_range(const char* key, double value, const Range& range);

  const nlohmann::json* value_;  // null when absent or not a map
  std::string path_;
  ParseContext* ctx_;
  std::vector<std::string> known_;  // in reading order, for the hint
  bool finished_ = false;
};

template <typename E>
Section& Section::choice(const char* key, E& field, const EnumNames<E>& names, std::string_view doc) {
  std::string allowed, current;
  for (const auto& [name, value] : names) {
    allowed += (allowed.empty() ? "" : ", ") + name;
    if (value == field) current = name;  // the last of a value's names: verl's alias (low_var_kl for k3)
  }
  const nlohmann::json* v = value_of(key, "one of " + allowed, doc, current);
  if (!v) return *this;
  if (v->is_string()) {
    for (const auto& [name, value] : names)
      if (name == v->get<std::string>()) return field = value, *this;
  }
  std::vector<std::string> candidates;
  for (const auto& [name, value] : names) candidates.push_back(name);
  fail(key, show_value(*v) + " is not a known name",
       "write one of: " + allowed + did_you_mean_hint(*v, candidates));
  return *this;
}

}  // namespace rlwb::core::config
