// The method catalog the editor validates against and its palette offers.
// The real one (every worker role's methods, the reward types, the
// controller's builtins and tasks) is built by app/catalog.h, which
// needs LibTorch, so ui/ does not build it: rlwb-gui's main hands it in
// (WorkbenchOptions::build_catalog), or it is read as JSON
// (`rlwb-gui --catalog FILE`). Without either the editor falls back to
// the catalog the opened file implies (catalog_from_calls): the calls it
// makes count as known, so a call it did not make (a typo typed into the
// editor) is flagged, but so is a method the file never used.
// Used by graph_panels.cpp (palette, validation) and workbench.cpp (--catalog).
#pragma once

#include <string>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"

namespace rlwb::ui {

// A catalog as JSON: {"role_methods": {role: METHODS}, "reward_methods":
// {type: METHODS}, "builtins": METHODS, "task_columns": {task: [...]},
// "machine_gpus": N, "machine_cpu_workers": N}, where METHODS is a list of
// method names (their ports then go unchecked) or a map {method: {"in":
// [port...], "out": [port...], "any_in": bool}} with a port a name or
// {"name", "required", "doc"}. Throws on a malformed file.
core::MethodCatalog catalog_from_json(const std::string& text);

// The catalog `exp` implies: for each model's role and each reward's type
// the methods its nodes (the graph's and the trainer phases') call on them
// (with their ports unknown, so not checked),
// the builtins they call, its task with the columns they read that no node
// of the same graph writes, and no limit on the machine (the editor does
// not know where the graph will run).
core::MethodCatalog catalog_from_calls(const core::Experiment& exp);

}  // namespace rlwb::ui
