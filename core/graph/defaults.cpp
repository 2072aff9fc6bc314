// `defaults:` in graph files: loading the bases (relative paths, cycles,
// files that cannot be read) and merging a document over another while
// keeping where each key was written. The rules are in defaults.h.
#include "core/graph/defaults.h"

#include <algorithm>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A list the merge edits by id: every item a map with a text `id`.
bool is_node_list(const json& value) {
  return value.is_array() && std::all_of(value.begin(), value.end(), [](const json& item) {
           return item.is_object() && item.contains("id") && item["id"].is_string();
         });
}

std::vector<std::string> ids_of(const json& list) {
  std::vector<std::string> ids;
  for (const auto& item : list) ids.push_back(item["id"].get<std::string>());
  return ids;
}

// Merges one document over another, key origins included: `over`'s keys
// (origins in `over_lines`) go into `into` (origins in `lines`).
class Merger {
 public:
  Merger(LineMap& lines, const LineMap& over_lines, std::vector<GraphIssue>& issues)
      : lines_(lines), over_lines_(over_lines), issues_(issues) {}

  // `into` and `over` are maps at `into_at` and `over_at` in their documents.
  void merge_map(json& into, const std::string& into_at, const json& over, const std::string& over_at) {
    for (const auto& [key, value] : over.items()) {
      const std::string to = join_path(into_at, key), from = join_path(over_at, key);
      const bool has = into.contains(key);
      if (value.is_null()) {
        into.erase(key);
        erase_lines_below(lines_, to, true);
      } else if (has && into[key].is_object() && value.is_object()) {
        copy_origin(from, to);
        merge_map(into[key], to, value, from);
      } else if (has && is_node_list(into[key]) && value.is_object()) {
        copy_origin(from, to);
        edit_nodes(into[key], to, value, from);
      } else {
        into[key] = value;
        erase_lines_below(lines_, to, true);
        copy_origins_below(from, to);
      }
    }
  }

 private:
  // `edits` maps node ids to changes (a map), to null (remove the node), or
  // to a new node (appended); applied in the order they were written.
  void edit_nodes(json& list, const std::string& to, const json& edits, const std::string& from) {
    std::vector<std::string> order;
    for (const auto& [id, _] : edits.items()) order.push_back(id);
    std::stable_sort(order.begin(), order.end(), [&](const std::string& a, const std::string& b) {
      return written_at(join_path(from, a)) < written_at(join_path(from, b));
    });
    for (const auto& id : order) {
      const json& edit = edits.at(id);
      const std::string edit_from = join_path(from, id);
      const std::vector<std::string> ids = ids_of(list);
      const auto found = std::find(ids.begin(), ids.end(), id);
      const std::size_t index = found - ids.begin();
      const std::string item_to = join_path(to, std::to_string(index));
      if (edit.is_null()) {
        if (found == ids.end()) {
          problem(edit_from, "'" + edit_from + "' removes node '" + id + "', which the base does not have",
                  "the base's nodes here: " + list_names(ids) + "." + did_you_mean(id, ids));
          continue;
        }
        list.erase(index);
        erase_lines_below(lines_, item_to, true);
        shift_lines_after(lines_, to, index);
      } else if (!edit.is_object()) {
        problem(edit_from,
                "'" + edit_from + "' should be a map of changes to node '" + id + "', not " +
                    describe_value(edit),
                "write e.g. " + id + ": {out: [a, b]}, or " + id +
                    ": ~ to remove the node; a list in place of the map replaces every node");
      } else {
        if (found == ids.end()) {
          list.push_back(json{{"id", id}});
          copy_origin(edit_from, join_path(item_to, "id"));
        }
        copy_origin(edit_from, item_to);
        merge_map(list[index], item_to, edit, edit_from);
      }
    }
  }

  int written_at(const std::string& over_path) const {
    auto it = over_lines_.find(over_path);
    return it == over_lines_.end() ? INT_MAX : it->second.line;
  }

  void copy_origin(const std::string& from, const std::string& to) {
    if (auto it = over_lines_.find(from); it != over_lines_.end()) lines_[to] = it->second;
  }

  void copy_origins_below(const std::string& from, const std::string& to) {
    copy_origin(from, to);
    const std::string prefix = from.empty() ? "" : from + ".";
    for (auto it = over_lines_.lower_bound(prefix);
         it != over_lines_.end() && it->first.rfind(prefix, 0) == 0; ++it)
      lines_[join_path(to, it->first.substr(prefix.size()))] = it->second;
  }

  void problem(const std::string& over_path, const std::string& message, const std::string& hint) {
    KeyOrigin at;
    if (auto it = over_lines_.find(over_path); it != over_lines_.end()) at = it->second;
    issues_.push_back({at.file, at.line, "", message, hint});
  }

  LineMap& lines_;
  const LineMap& over_lines_;
  std::vector<GraphIssue>& issues_;
};

bool read_text(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// One file and its bases, loaded depth first; `chain` holds the files
// being loaded (the outermost first), which is how a cycle shows.
class BaseLoader {
 public:
  BaseLoader(std::vector<std::string>& bases, std::vector<GraphIssue>& issues)
      : bases_(bases), issues_(issues) {}

  json load(const std::string& text, const std::string& file, LineMap& lines) {
    chain_.push_back({file, identity(file)});
    json doc = parse_yaml_document(text, file, lines, issues_);
    if (doc.is_object() && doc.contains("defaults")) {
      json merged = json::object();
      LineMap merged_lines;
      merge_bases(doc["defaults"], file, lines, merged, merged_lines);
      doc.erase("defaults");
      erase_lines_below(lines, "defaults", true);
      Merger(merged_lines, lines, issues_).merge_map(merged, "", doc, "");
      doc = std::move(merged);
      lines = std::move(merged_lines);
    }
    chain_.pop_back();
    return doc;
  }

 private:
  struct Link {
    std::string file;  // as named (joined to the including file's folder)
    std::string identity;
  };

  static std::string identity(const std::string& file) {
    if (file.empty()) return "";
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(file, ec);
    return ec ? fs::path(file).lexically_normal().string() : canonical.string();
  }

  void merge_bases(const json& defaults, const std::string& file, const LineMap& lines, json& merged,
                   LineMap& merged_lines) {
    auto origin = [&](const std::string& path) {
      auto it = lines.find(path);
      if (it == lines.end()) it = lines.find("defaults");
      return it == lines.end() ? KeyOrigin{0, file} : it->second;
    };
    const std::string folder = fs::path(file).parent_path().string();
    const std::string relative_hint = "paths in defaults: are relative to the file that names them (here " +
                                      (folder.empty() ? std::string("the working directory") : folder + "/") +
                                      ")";
    if (!defaults.is_array()) {
      add(origin("defaults"), "'defaults' should be a list of base files, not " + describe_value(defaults),
          "write e.g. defaults: [grpo.yaml]; " + relative_hint);
      return;
    }
    for (std::size_t i = 0; i < defaults.size(); ++i) {
      const std::string at = "defaults." + std::to_string(i);
      const KeyOrigin where = origin(at);
      if (!defaults[i].is_string()) {
        add(where, "'" + at + "' should be a file name, not " + describe_value(defaults[i]),
            "write e.g. defaults: [grpo.yaml]");
        continue;
      }
      const std::string name = defaults[i].get<std::string>();
      const std::string base = (fs::path(file).parent_path() / name).lexically_normal().string();
      const std::string base_identity = identity(base);
      auto in_chain = std::find_if(chain_.begin(), chain_.end(),
                                   [&](const Link& link) { return link.identity == base_identity; });
      if (in_chain != chain_.end()) {
        std::string cycle;
        for (auto it = in_chain; it != chain_.end(); ++it) cycle += it->file + " -> ";
        add(where, "defaults: '" + name + "' makes a cycle: " + cycle + base,
            "a file cannot build on itself; remove this entry or the one that leads back here");
        continue;
      }
      std::string text;
      if (!read_text(base, text) || fs::is_directory(base)) {
        add(where, "defaults: cannot read the base file '" + base + "'", "check the name; " + relative_hint);
        continue;
      }
      LineMap base_lines;
      const std::size_t issues_before = issues_.size();
      json base_doc = load(text, base, base_lines);
      if (base_doc.is_null() && issues_.size() > issues_before) continue;  // its syntax error
      if (!base_doc.is_object() && !base_doc.is_null()) {
        add(where,
            "the base file '" + base + "' should be a map of sections, not " + describe_value(base_doc),
            "a base holds sections like any graph file: name:, models:, trainer:, nodes:, ...");
        continue;
      }
      bases_.push_back(base);
      if (base_doc.is_object()) Merger(merged_lines, base_lines, issues_).merge_map(merged, "", base_doc, "");
    }
  }

  void add(const KeyOrigin& where, const std::string& message, const std::string& hint) {
    issues_.push_back({where.file, where.line, "", message, hint});
  }

  std::vector<std::string>& bases_;
  std::vector<GraphIssue>& issues_;
  std::vector<Link> chain_;
};

}  // namespace

json parse_with_defaults(const std::string& text, const std::string& file, LineMap& lines,
                         std::vector<std::string>& bases, std::vector<GraphIssue>& issues) {
  return BaseLoader(bases, issues).load(text, file, lines);
}

}  // namespace rlwb::core::graph_detail
