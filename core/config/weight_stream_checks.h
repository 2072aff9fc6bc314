// The checks of models that generate on a pool of their own (role rollout,
// models.<name>.config.weight_stream): what WeightStreamer
// (workers/hybrid_engine/weight_stream.h) and the controller's weight links
// (core/controller/weight_links.h) need, found before anything starts --
// the source is an actor on another CPU pool that trains without pipeline
// stages and feeds no other rollout model, the rollout holds whole models
// (tp = pp = 1), and both are the same network with the same tokenizer and
// sampling temperature.
#pragma once

#include "core/config/model_options.h"
#include "core/config/section.h"
#include "core/graph/experiment.h"

#include <map>
#include <string>

namespace rlwb::core::config {

void check_weight_streams(const Experiment& exp, const std::map<std::string, ModelOptions>& models,
                          ParseContext& ctx);

}  // namespace rlwb::core::config
