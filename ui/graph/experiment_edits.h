// Edits of an experiment's resources -- pools, models, reward modules --
// that keep the rest of the file pointing at them: renaming a model renames
// the calls of every node (the step's and the trainer phases') and the
// trainer's references (warm_start.sync, save); renaming a pool moves its
// models along. Pure functions on core::Experiment, for the editor's
// inspector (inside a gesture, graph_document.h) and the tests.
//
// Deleting leaves what pointed at the deleted thing as it is: the validator
// then names each node or model that lost its target, which says more than
// a silent cascade would.
#pragma once

#include <string>

#include "core/graph/experiment.h"

namespace rlwb::ui {

// Why `name` cannot be the new name of a pool ("pools") or of a model or
// reward ("models"/"rewards", which share one namespace with "builtin",
// since a node's call names either); "" when it can.
std::string resource_name_problem(const core::Experiment& exp, const std::string& kind,
                                  const std::string& name, const std::string& current = "");
// `base`, else base_2, base_3, ... : a name not taken in `kind`.
std::string unused_resource_name(const core::Experiment& exp, const std::string& kind,
                                 const std::string& base);

void add_pool(core::Experiment& exp, const std::string& name, int workers, const std::string& device);
// Renames the pool and every model's reference to it.
void rename_pool(core::Experiment& exp, const std::string& from, const std::string& to);
void delete_pool(core::Experiment& exp, const std::string& name);

void add_model(core::Experiment& exp, const std::string& name, const std::string& role,
               const std::string& pool);
// Renames the model, the calls that target it and the trainer's references.
void rename_model(core::Experiment& exp, const std::string& from, const std::string& to);
void delete_model(core::Experiment& exp, const std::string& name);

void add_reward(core::Experiment& exp, const std::string& name, const std::string& type);
void rename_reward(core::Experiment& exp, const std::string& from, const std::string& to);
void delete_reward(core::Experiment& exp, const std::string& name);

}  // namespace rlwb::ui
