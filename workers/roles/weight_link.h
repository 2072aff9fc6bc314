// A model role's end of a weight link: an actor training on one pool
// streams its weights to a rollout model generating on another
// (models.<rollout>.config.weight_stream; the controller's side is
// core/controller/weight_links.h). Both models' roles have the method
// `stream_weights` (broadcast); the controller calls it on both at once
// after every RL step, with the same args:
//   store   "host:port" of a c10d store the controller serves for the link
//   name    the link's name (the rollout model's), keys the store
//   senders the actor's tp size t: its first data-parallel replica's ranks
//           send, tp rank k as link rank k
//   receivers the rollout's ranks, link ranks t ...
//   bucket_bytes, only_changed   as WeightStreamOptions
// The first call makes the link's c10d group and the WeightStreamer
// (collective over the link); later calls stream. The actor's other
// replicas return at once. A role holds one link: the validator refuses a
// second rollout model of the same actor (weight_stream_checks.h).
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <string>

#include "workers/hybrid_engine/weight_stream.h"
#include "workers/method_registry.h"
#include "workers/model/transformer.h"
#include "workers/spmd_group.h"

namespace rlwb::workers::roles {

class WeightLink {
 public:
  // Streams `net` (a sender: this rank's shard; a receiver: the whole model,
  // overwritten). `sender`: this rank is on the actor's side. Empty stats
  // for an actor rank outside the first replica. Throws RoleConfigError for
  // args that do not fit this rank's mesh.
  hybrid_engine::StreamStats stream(model::Transformer& net, const WorkerEnv& env, const nlohmann::json& args,
                                    bool sender);

 private:
  std::string made_for_;         // the store and name of the link made
  const void* bound_ = nullptr;  // the network the streamer reads
  std::unique_ptr<SpmdGroup> group_;
  std::unique_ptr<hybrid_engine::WeightStreamer> streamer_;
};

}  // namespace rlwb::workers::roles
