// Hydra-style overrides: parse `[+|++|~]key.path[=value]`, find the key in
// the document (map keys, list indices, or a list item's id), and set, add
// or remove it.
#include "core/graph/overrides.h"

#include <algorithm>
#include <cctype>
#include <optional>

#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

using nlohmann::json;

enum class Op { set, add, set_or_add, remove };

struct Override {
  std::string text;  // as the user wrote it
  Op op = Op::set;
  std::vector<std::string> path;  // as written (ids allowed for list items)
  json value;
};

// An override problem: thrown inside this file, turned into an issue.
struct OverrideProblem {
  std::string message, hint;
};

constexpr const char* kSyntaxHint =
    "write key.path=value (e.g. trainer.steps=50), +key.path=value to add a key, "
    "~key.path to remove one";

std::vector<std::string> split_path(const std::string& key) {
  std::vector<std::string> path;
  std::size_t start = 0;
  while (true) {
    std::size_t dot = key.find('.', start);
    path.push_back(key.substr(start, dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (std::any_of(path.begin(), path.end(), [](const std::string& s) { return s.empty(); }))
    throw OverrideProblem{"the key '" + key + "' has an empty part", kSyntaxHint};
  return path;
}

Override parse_override(const std::string& text, const std::string& file) {
  Override o;
  o.text = text;
  std::string key = text;
  std::string value;
  if (key.rfind("~", 0) == 0) {
    o.op = Op::remove;
    key.erase(0, 1);
    if (key.find('=') != std::string::npos)
      throw OverrideProblem{"a removal takes no value", "write ~" + key.substr(0, key.find('='))};
  } else {
    auto eq = key.find('=');
    if (eq == std::string::npos) throw OverrideProblem{"has no '='", kSyntaxHint};
    value = key.substr(eq + 1);
    key.erase(eq);
    if (key.rfind("++", 0) == 0)
      o.op = Op::set_or_add, key.erase(0, 2);
    else if (key.rfind("+", 0) == 0)
      o.op = Op::add, key.erase(0, 1);
  }
  if (key.empty()) throw OverrideProblem{"has no key before the '='", kSyntaxHint};
  o.path = split_path(key);
  if (o.op != Op::remove) {
    LineMap value_lines;
    std::vector<GraphIssue> value_issues;
    o.value = parse_yaml_document(value, file, value_lines, value_issues);
    if (!value_issues.empty())
      throw OverrideProblem{"the value is not valid YAML: " + value_issues.front().message,
                            "quote it in the shell so YAML reads it as text: key='\"...\"'"};
  }
  return o;
}

std::string type_name(const json& value) {
  if (value.is_object()) return "a map";
  if (value.is_array()) return "a list";
  if (value.is_string()) return "text";
  if (value.is_boolean()) return "a bool";
  if (value.is_number()) return "a number";
  return "null";
}

std::vector<std::string> keys_of(const json& map) {
  std::vector<std::string> keys;
  for (const auto& [key, _] : map.items()) keys.push_back(key);
  return keys;
}

std::vector<std::string> ids_of(const json& list) {
  std::vector<std::string> ids;
  for (const auto& item : list)
    if (item.is_object() && item.contains("id") && item["id"].is_string())
      ids.push_back(item["id"].get<std::string>());
  return ids;
}

// Index of `segment` in `list`: a number, or the id of an item.
std::optional<std::size_t> list_index(const json& list, const std::string& segment) {
  if (!segment.empty() &&
      std::all_of(segment.begin(), segment.end(), [](unsigned char c) { return std::isdigit(c); }))
    return std::stoul(segment);
  for (std::size_t i = 0; i < list.size(); ++i)
    if (list[i].is_object() && list[i].value("id", json()) == json(segment)) return i;
  return std::nullopt;
}

void apply(json& doc, LineMap& lines, const Override& o) {
  json* parent = &doc;
  std::string parent_path;  // with list indices, as in `lines`
  std::string written;      // as the user wrote it, for messages
  const bool may_add = o.op == Op::add || o.op == Op::set_or_add;
  for (std::size_t i = 0; i + 1 < o.path.size(); ++i) {
    const std::string& segment = o.path[i];
    written = join_path(written, segment);
    if (parent->is_object()) {
      if (!parent->contains(segment)) {
        if (!may_add)
          throw OverrideProblem{"'" + written + "' does not exist",
                                (parent_path.empty() ? std::string("the file") : "'" + parent_path + "'") +
                                    " has: " + list_names(keys_of(*parent)) + "." +
                                    did_you_mean(segment, keys_of(*parent)) +
                                    (o.op == Op::set ? " To add it write +" + o.text : "")};
        (*parent)[segment] = json::object();
      }
      parent = &(*parent)[segment];
      parent_path = join_path(parent_path, segment);
    } else if (parent->is_array()) {
      auto index = list_index(*parent, segment);
      if (!index || *index >= parent->size())
        throw OverrideProblem{
            "'" + written + "' is not an item of the list (" + std::to_string(parent->size()) + " items)",
            "use an index from 0 or an item id: " + list_names(ids_of(*parent))};
      parent = &(*parent)[*index];
      parent_path = join_path(parent_path, std::to_string(*index));
    } else {
      throw OverrideProblem{"'" + written + "' is " + type_name(*parent) + ", not a map or list",
                            "override '" + written + "' as a whole"};
    }
  }

  const std::string& last = o.path.back();
  const std::string parent_written = written;
  written = join_path(written, last);
  if (parent->is_object()) {
    const std::string path = join_path(parent_path, last);
    const bool exists = parent->contains(last);
    if (o.op == Op::add && exists)
      throw OverrideProblem{"'" + written + "' exists already", "to replace it write " + o.text.substr(1)};
    if ((o.op == Op::set || o.op == Op::remove) && !exists) {
      std::string owner = parent_path.empty() ? std::string("the file") : "'" + parent_path + "'";
      std::string hint =
          owner + " has: " + list_names(keys_of(*parent)) + "." + did_you_mean(last, keys_of(*parent));
      if (o.op == Op::set) hint += " To add a new key write +" + o.text;
      throw OverrideProblem{"'" + written + "' does not exist", hint};
    }
    if (o.op == Op::remove) {
      parent->erase(last);
      erase_lines_below(lines, path, true);
    } else {
      (*parent)[last] = o.value;
      erase_lines_below(lines, path, !exists);
    }
  } else if (parent->is_array()) {
    auto index = list_index(*parent, last);
    const std::size_t size = parent->size();
    bool appends = index && *index == size && may_add;
    if (!index || (*index >= size && !appends))
      throw OverrideProblem{
          "'" + written + "' is not an item of the list (" + std::to_string(size) + " items)",
          "use an index from 0 or an item id (" + list_names(ids_of(*parent)) + "); to append write +" +
              join_path(parent_path, std::to_string(size)) + "=..."};
    if (o.op == Op::add && !appends)
      throw OverrideProblem{"'" + written + "' exists already", "to replace it write " + o.text.substr(1)};
    const std::string path = join_path(parent_path, std::to_string(*index));
    if (o.op == Op::remove) {
      parent->erase(*index);
      erase_lines_below(lines, path, true);
      shift_lines_after(lines, parent_path, *index);
    } else if (appends) {
      parent->push_back(o.value);
    } else {
      (*parent)[*index] = o.value;
      erase_lines_below(lines, path, false);
    }
  } else {
    throw OverrideProblem{"'" + parent_written + "' is " + type_name(*parent) + ", not a map or list",
                          "override '" + parent_written + "' as a whole"};
  }
}

}  // namespace

void apply_overrides(json& doc, LineMap& lines, const std::vector<std::string>& overrides,
                     const std::string& file, std::vector<GraphIssue>& issues) {
  if (doc.is_null()) doc = json::object();  // an empty file
  for (const auto& text : overrides) {
    try {
      Override o = parse_override(text, file);
      // The profile section is a run's switch, not part of the experiment:
      // its keys all have defaults, so `profile.enabled=true` works on a file
      // without the section, as ++ does (a misspelt key is then the typed
      // parse's "unknown key", with its did-you-mean).
      if (o.op == Op::set && o.path.size() > 1 && o.path.front() == "profile") o.op = Op::set_or_add;
      apply(doc, lines, o);
    } catch (const OverrideProblem& problem) {
      issues.push_back({file, 0, "", "override '" + text + "': " + problem.message, problem.hint});
    }
  }
}

}  // namespace rlwb::core::graph_detail
