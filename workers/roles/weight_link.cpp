#include "workers/roles/weight_link.h"

#include "workers/roles/model_setup.h"

namespace rlwb::workers::roles {

hybrid_engine::StreamStats WeightLink::stream(model::Transformer& net, const WorkerEnv& env,
                                              const nlohmann::json& args, bool sender) {
  const std::string store = args.at("store").get<std::string>();
  const std::string name = args.at("name").get<std::string>();
  const int senders = args.at("senders").get<int>();
  const int receivers = args.at("receivers").get<int>();
  int link_rank = 0;
  if (sender) {
    if (env.mesh.pp > 1 || env.mesh.tp != senders)
      throw RoleConfigError(
          "models." + env.model + ": streams its weights with pp = 1 and tp = " + std::to_string(senders) +
          ", but its mesh has pp = " + std::to_string(env.mesh.pp) + ", tp = " + std::to_string(env.mesh.tp));
    if (env.mesh.dp_index(env.rank) != 0) return {};  // the first replica's shards are the whole model
    link_rank = env.mesh.tp_index(env.rank);
  } else {
    if (env.world != receivers)
      throw RoleConfigError("models." + env.model + ": the link expects " + std::to_string(receivers) +
                            " receiving ranks but the pool has " + std::to_string(env.world));
    link_rank = senders + env.rank;
  }
  const std::string key = store + "/" + name;
  if (made_for_ != key) {
    streamer_.reset();
    group_.reset();
    const auto colon = store.rfind(':');
    if (colon == std::string::npos)
      throw RoleConfigError("stream_weights: store '" + store + "' is not host:port");
    SpmdOptions options;
    options.store_host = store.substr(0, colon);
    options.store_port = std::stoi(store.substr(colon + 1));
    options.rank = link_rank;
    options.world = senders + receivers;
    options.serve_store = false;  // the controller's
    group_ = std::make_unique<SpmdGroup>(options);
    streamer_ = std::make_unique<hybrid_engine::WeightStreamer>(
        net, *group_, senders, name,
        hybrid_engine::WeightStreamOptions{.bucket_bytes = args.value("bucket_bytes", int64_t{32} << 20),
                                           .only_changed = args.value("only_changed", false)});
    made_for_ = key;
    bound_ = net.get();
  } else if (bound_ != net.get()) {  // a checkpoint loaded since: a new network
    streamer_->rebind(net);
    bound_ = net.get();
  }
  return streamer_->stream();
}

}  // namespace rlwb::workers::roles
