// Internal to core/graph: Hydra-style `key.path=value` overrides applied to
// the parsed document before the loader reads it into structs. The syntax is
// documented on load_experiment_text() in experiment.h, with one exception
// made here: `profile.<key>=value` adds the key when it is missing (as ++
// does), since every profile setting has a default (docs/graph-file.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/graph/yaml_document.h"

namespace rlwb::core::graph_detail {

// Applies `overrides` in order to `doc`. Each one that is malformed or does
// not fit the document adds an issue (naming the override, with a hint) and
// is skipped. Keeps `lines` true to the file: a replaced value loses the
// lines below it (its key keeps its own), a removed list item shifts the
// lines of the items after it.
void apply_overrides(nlohmann::json& doc, LineMap& lines, const std::vector<std::string>& overrides,
                     const std::string& file, std::vector<GraphIssue>& issues);

}  // namespace rlwb::core::graph_detail
