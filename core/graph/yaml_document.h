// Internal to core/graph: YAML text <-> JSON value, keeping the line of
// every key. The loader reads graph files and override values through it;
// the writer emits through it; core/config/launch_options reads launch
// files through it. Scalars resolve by the YAML 1.2 core schema:
// quoted -> string; plain null/~/empty -> null; true/false -> bool;
// 12, 0x1f, 0o17 -> int; 1.5, 1e-3, .inf, .nan -> float; anything else ->
// string (so yes/no/on/off stay strings).
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph/experiment.h"

namespace rlwb::core::graph_detail {

// Where a key was written: its 1-based line and the file it is in (the
// experiment's own file or a base that its `defaults:` names).
struct KeyOrigin {
  int line = 0;
  std::string file;
  bool operator==(const KeyOrigin&) const = default;
};
// Dotted key path ("nodes.2.in"; list items by 0-based index) -> origin.
using LineMap = std::map<std::string, KeyOrigin>;

// Joins a dotted path: join_path("nodes", "2") == "nodes.2", join_path("", "a") == "a".
std::string join_path(const std::string& parent, const std::string& key);

// Parses one YAML document. Syntax errors become one issue with the line;
// duplicate and non-scalar keys become issues too (the rest still parses).
// Records the 1-based line of each key (and list item) in `lines`, with
// `file` as its file.
nlohmann::json parse_yaml_document(const std::string& text, const std::string& file, LineMap& lines,
                                   std::vector<GraphIssue>& issues);

// Keeping `lines` true to a document that changes (overrides, merges over
// a base): forget the origins below `path` (and its own, when asked), and,
// after item `removed` of the list at `list_path` was erased, renumber the
// items after it (item i becomes i - 1).
void erase_lines_below(LineMap& lines, const std::string& path, bool including_itself);
void shift_lines_after(LineMap& lines, const std::string& list_path, std::size_t removed);

// What a plain (unquoted) scalar means under the core schema.
nlohmann::json resolve_plain_scalar(const std::string& text);

// How a map's keys are ordered and whether it or a list is written inline.
struct YamlShape {
  std::vector<std::string> first_keys;  // in this order, then the rest sorted
  bool flow = false;
};
// Path of the value being written, list items as "#": {"models", "*"} style
// matching is up to the callback.
using ShapeOf = YamlShape (*)(const std::vector<std::string>& path);

// The map's keys in writing order: `first` (those it has), then the rest sorted.
std::vector<std::string> ordered_keys(const nlohmann::json& map, const std::vector<std::string>& first);

// experiment_to_yaml's order and inline style (experiment.h), by path from
// the document's root; also what yaml_edit.h writes a section anew with.
YamlShape canonical_shape(const std::vector<std::string>& path);

// Writes `value` as block YAML ending in a newline. Strings that would read
// back as something else are quoted; floats use the shortest text that reads
// back to the same double.
std::string emit_yaml(const nlohmann::json& value, ShapeOf shape_of);

}  // namespace rlwb::core::graph_detail
