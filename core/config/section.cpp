#include "core/config/section.h"

#include "core/config/setting_types.h"

#include "core/graph/key_lines.h"
#include "core/graph/names.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace rlwb::core::config {

using nlohmann::json;

std::string ConfigProblem::to_string() const {
  std::string s = (line > 0 ? "line " + std::to_string(line) + ": " : std::string()) + path + ": " + message;
  if (!hint.empty()) s += " (hint: " + hint + ")";
  return s;
}

namespace {
std::string join_problems(const std::vector<ConfigProblem>& problems) {
  std::string s;
  for (const auto& p : problems) s += (s.empty() ? "" : "\n") + p.to_string();
  return s;
}

std::string format_number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
}  // namespace

ConfigError::ConfigError(std::vector<ConfigProblem> problems)
    : std::runtime_error(join_problems(problems)), problems_(std::move(problems)) {}

void SettingsDoc::add(SettingDoc doc) {
  for (auto& s : settings)
    if (s.path == doc.path) return;
  settings.push_back(std::move(doc));
}

std::string SettingsDoc::markdown() const {
  std::string out, section;
  for (const auto& s : settings) {
    std::string top = s.path.substr(0, s.path.find('.'));
    if (top != section) {
      section = top;
      out += "\n### " + top + "\n\n| setting | type | default | meaning |\n|---|---|---|---|\n";
    }
    auto cell = [](std::string text) {
      for (size_t i = 0; (i = text.find('|', i)) != std::string::npos; i += 2) text.replace(i, 1, "\\|");
      return text;
    };
    out += "| `" + s.path + "` | " + cell(s.type) + " | " +
           (s.default_value.empty() ? "" : "`" + cell(s.default_value) + "`") + " | " + cell(s.doc) + " |\n";
  }
  return out;
}

int ParseContext::line_of(const std::string& path) const {
  if (!lines_) return 0;
  const std::string at = nearest_key_with_line(*lines_, path);
  return at.empty() ? 0 : lines_->at(at);
}

void ParseContext::add(const std::string& path, std::string message, std::string hint) {
  problems_.push_back({path, line_of(path), std::move(message), std::move(hint)});
}

void ParseContext::throw_if_any() const {
  if (!problems_.empty()) throw ConfigError(problems_);
}

std::string Range::describe() const {
  if (min && max) return "in [" + format_number(*min) + ", " + format_number(*max) + "]";
  if (min) return (min_exclusive ? "> " : ">= ") + format_number(*min);
  if (max) return "<= " + format_number(*max);
  return "";
}
Range at_least(double min) { return Range{min, std::nullopt, false}; }
Range above(double min) { return Range{min, std::nullopt, true}; }
Range between(double min, double max) { return Range{min, max, false}; }

std::string show_value(const json& value) {
  if (value.is_string()) return "'" + value.get<std::string>() + "'";
  return value.dump();
}

std::string did_you_mean_hint(const json& value, const std::vector<std::string>& candidates) {
  if (!value.is_string()) return "";
  auto close = graph_detail::similar_names(value.get<std::string>(), candidates);
  return close.empty() ? "" : ". Did you mean '" + close.front() + "'?";
}

Section::Section(const json* value, std::string path, ParseContext& ctx)
    : value_(nullptr), path_(std::move(path)), ctx_(&ctx) {
  if (value == nullptr || value->is_null()) return;
  if (!value->is_object()) {
    ctx.add(path_, "should be a map of settings, not " + show_value(*value),
            "write e.g. {key: value} or leave it out");
    return;
  }
  value_ = value;
}

Section::Section(Section&& other) noexcept
    : value_(other.value_),
      path_(std::move(other.path_)),
      ctx_(other.ctx_),
      known_(std::move(other.known_)),
      finished_(other.finished_) {
  other.finished_ = true;
}

Section::~Section() { finish(); }

std::string Section::path(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

bool Section::has(const char* key) const {
  return value_ && value_->contains(key) && !(*value_)[key].is_null();
}

void Section::fail(const std::string& key, std::string message, std::string hint) {
  ctx_->add(key.empty() ? path_ : path(key), std::move(message), std::move(hint));
}

const json* Section::value_of(const char* key, std::string_view type, std::string_view doc,
                              const std::string& default_value) {
  known_.emplace_back(key);
  if (SettingsDoc* d = ctx_->doc()) d->add({path(key), std::string(type), default_value, std::string(doc)});
  if (!value_) return nullptr;
  auto it = value_->find(key);
  if (it == value_->end()) return nullptr;
  return &*it;
}

void Section::wrong_type(const char* key, const json& value, std::string_view wanted,
                         const std::string& example) {
  fail(key, show_value(value) + " is not " + std::string(wanted),
       "write " + std::string(wanted) + ", e.g. " + example);
}

void Section::check_range(const char* key, double value, const Range& range) {
  bool ok = true;
  if (range.min) ok = ok && (range.min_exclusive ? value > *range.min : value >= *range.min);
  if (range.max) ok = ok && value <= *range.max;
  if (!ok || !std::isfinite(value))
    fail(key, format_number(value) + " is out of range", "it must be " + range.describe());
}

namespace {
std::string type_with_range(std::string type, const Range& range) {
  std::string r = range.describe();
  return r.empty() ? type : type + " " + r;
}
bool is_integral(const json& v) {
  if (v.is_number_integer()) return true;
  return v.is_number_float() && std::floor(v.get<double>()) == v.get<double>() &&
         std::abs(v.get<double>()) < 9e15;
}
}  // namespace

Section& Section::integer(const char* key, int64_t& field, std::string_view doc, Range range) {
  const json* v =
      value_of(key, type_with_range(std::string(kIntegerType), range), doc, std::to_string(field));
  if (!v) return *this;
  if (!is_integral(*v)) return wrong_type(key, *v, "an integer", std::to_string(field)), *this;
  const auto n = static_cast<int64_t>(v->get<double>());
  check_range(key, static_cast<double>(n), range);
  field = n;
  return *this;
}

Section& Section::integer(const char* key, int& field, std::string_view doc, Range range) {
  int64_t wide = field;
  integer(key, wide, doc, range);
  field = static_cast<int>(wide);
  return *this;
}

Section& Section::integer(const char* key, std::optional<int64_t>& field, std::string_view doc, Range range) {
  const json* v =
      value_of(key, type_with_range(std::string(kIntegerType), range) + std::string(kNullableSuffix), doc,
               field ? std::to_string(*field) : "");
  if (!v) return *this;
  if (v->is_null()) return field.reset(), *this;
  if (!is_integral(*v)) return wrong_type(key, *v, "an integer", field ? std::to_string(*field) : "8"), *this;
  field = static_cast<int64_t>(v->get<double>());
  check_range(key, static_cast<double>(*field), range);
  return *this;
}

Section& Section::number(const char* key, double& field, std::string_view doc, Range range) {
  const json* v = value_of(key, type_with_range(std::string(kNumberType), range), doc, format_number(field));
  if (!v) return *this;
  if (!v->is_number()) return wrong_type(key, *v, "a number", format_number(field)), *this;
  field = v->get<double>();
  check_range(key, field, range);
  return *this;
}

Section& Section::number(const char* key, std::optional<double>& field, std::string_view doc, Range range) {
  const json* v =
      value_of(key, type_with_range(std::string(kNumberType), range) + std::string(kNullableSuffix), doc,
               field ? format_number(*field) : "null");
  if (!v) return *this;
  if (v->is_null()) return field.reset(), *this;
  if (!v->is_number())
    return wrong_type(key, *v, "a number or null", field ? format_number(*field) : "1.0"), *this;
  field = v->get<double>();
  check_range(key, *field, range);
  return *this;
}

Section& Section::flag(const char* key, bool& field, std::string_view doc) {
  const json* v = value_of(key, kFlagType, doc, field ? "true" : "false");
  if (!v) return *this;
  if (!v->is_boolean()) return wrong_type(key, *v, "true or false", field ? "true" : "false"), *this;
  field = v->get<bool>();
  return *this;
}

Section& Section::text(const char* key, std::string& field, std::string_view doc) {
  const json* v = value_of(key, kTextType, doc, field);
  if (!v) return *this;
  if (!v->is_string()) return wrong_type(key, *v, "text", field.empty() ? "name" : field), *this;
  field = v->get<std::string>();
  return *this;
}

Section& Section::names(const char* key, std::vector<std::string>& field, std::string_view doc) {
  std::string current = "[";
  for (const auto& n : field) current += (current.size() > 1 ? ", " : "") + n;
  current += "]";
  const json* v = value_of(key, kNamesType, doc, current);
  if (!v) return *this;
  if (v->is_string()) return field = {v->get<std::string>()}, *this;
  bool ok = v->is_array() && std::all_of(v->begin(), v->end(), [](const json& x) { return x.is_string(); });
  if (!ok) return wrong_type(key, *v, "a list of names", "[a, b]"), *this;
  field = v->get<std::vector<std::string>>();
  return *this;
}

Section& Section::numbers(const char* key, std::vector<double>& field, std::string_view doc,
                          size_t exact_size) {
  std::string current = "[";
  for (double n : field) current += (current.size() > 1 ? ", " : "") + format_number(n);
  current += "]";
  const json* v = value_of(
      key, exact_size ? "list of " + std::to_string(exact_size) + " numbers" : std::string(kNumbersType), doc,
      current);
  if (!v) return *this;
  bool ok = v->is_array() && std::all_of(v->begin(), v->end(), [](const json& x) { return x.is_number(); });
  if (!ok || (exact_size && v->size() != exact_size))
    return wrong_type(
               key, *v,
               exact_size ? "a list of " + std::to_string(exact_size) + " numbers" : "a list of numbers",
               current),
           *this;
  field = v->get<std::vector<double>>();
  return *this;
}

Section Section::child(const char* key, std::string_view doc) {
  known_.emplace_back(key);
  const json* v = value_ && value_->contains(key) ? &(*value_)[key] : nullptr;
  return Section(v, path(key), *ctx_);
}

const json* Section::raw(const char* key, std::string_view type, std::string_view doc) {
  return value_of(key, type, doc, "");
}

void Section::finish() {
  if (finished_) return;
  finished_ = true;
  if (!value_) return;
  std::vector<std::string> known;  // unique, in reading order
  for (const auto& k : known_)
    if (std::find(known.begin(), known.end(), k) == known.end()) known.push_back(k);
  for (auto& [key, value] : value_->items()) {
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    auto close = graph_detail::similar_names(key, known);
    std::string hint = close.empty() ? "" : "did you mean '" + close.front() + "'? ";
    hint += "the keys of " + (path_.empty() ? std::string("the file") : path_) +
            " are: " + graph_detail::list_names(known);
    fail(key, "unknown key '" + key + "'", hint);
  }
}

}  // namespace rlwb::core::config
