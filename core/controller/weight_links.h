// Generation on a pool of its own, the controller's side: each model of
// role rollout (models.<name>.config.weight_stream: {from: <actor>}) takes
// the actor's weights after every RL step, as verl's rollout workers apart
// from training do. A link is the actor's first data-parallel replica (its
// tp ranks, each sending its shard) and every rank of the rollout's pool,
// in one c10d group that rendezvouses through a store the WorkerCluster
// serves; sync() calls `stream_weights` on both models at once
// (workers/roles/weight_link.h) and waits for both -- a collective on the
// workers, each bounded by their groups' timeout. The validator
// (core/config/weight_stream_checks.h) has checked the layouts.
#pragma once

#include "core/config/model_options.h"
#include "core/controller/graph_runner.h"
#include "core/graph/experiment.h"

#include <functional>
#include <map>
#include <string>
#include <vector>

namespace rlwb::core {

class WeightLinks {
 public:
  // Serves a store for `ranks` ranks under `name`; returns "host:port".
  using ServeStore = std::function<std::string(const std::string& name, int ranks)>;
  WeightLinks(const Experiment& exp, const std::map<std::string, config::ModelOptions>& models,
              NodeTargets& targets, const ServeStore& serve);

  bool empty() const { return links_.empty(); }
  // Every link streams (all at once). Metrics: the receivers' counts,
  // weight_stream/received_mib, /tensors, /buckets (under
  // weight_stream/<rollout>/ when there are several links), and
  // timing_s/weight_stream, the wall time of them all.
  std::map<std::string, double> sync();

 private:
  struct Link {
    std::string rollout, actor;
    nlohmann::json args;  // stream_weights' (weight_link.h)
  };
  std::vector<Link> links_;
  NodeTargets& targets_;
};

}  // namespace rlwb::core
