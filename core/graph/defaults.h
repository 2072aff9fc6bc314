// Internal to core/graph: a graph file built on others. A top-level
// `defaults: [base.yaml, ...]` (Hydra's word) names base files, relative to
// the file that names them; the loader reads the file through
// parse_with_defaults(), which loads the bases (recursively), merges them in
// order and the file's own keys over them, and keeps where every key was
// written (file and line) in `lines`.
//
// Merge rules (docs/graph-file.md, "Building on another file"):
//   - maps merge key by key, recursively;
//   - scalars and lists replace what the base has;
//   - a key set to null removes the key (and is not kept itself);
//   - a map written where the base has a list of nodes (a list whose items
//     are all maps with an `id`: `nodes`, `trainer.<phase>.nodes`) edits
//     those items by id: `{gen: {out: [...]}}` merges into node `gen`,
//     `{gen: ~}` removes it, an id the base lacks is appended (in the
//     order written); a list there replaces the whole list.
// A missing or unreadable base, a base that is not a map, `defaults:` that
// is not a list of file names, and a cycle are issues at the entry that
// names the base; a node edit that is not a map, or that removes a node the
// base does not have, is an issue at the edit.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph/yaml_document.h"

namespace rlwb::core::graph_detail {

// Parses `text` (the contents of `file`) and resolves its `defaults:`. The
// result has no `defaults` key. `bases` gets every base file loaded, in the
// order merged. Returns null when `text` has a YAML syntax error.
nlohmann::json parse_with_defaults(const std::string& text, const std::string& file, LineMap& lines,
                                   std::vector<std::string>& bases, std::vector<GraphIssue>& issues);

}  // namespace rlwb::core::graph_detail
