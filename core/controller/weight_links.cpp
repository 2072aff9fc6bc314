#include "core/controller/weight_links.h"

#include <chrono>

namespace rlwb::core {

WeightLinks::WeightLinks(const Experiment& exp, const std::map<std::string, config::ModelOptions>& models,
                         NodeTargets& targets, const ServeStore& serve)
    : targets_(targets) {
  for (const auto& [name, options] : models) {
    if (!options.weight_stream) continue;
    const config::WeightStreamSource& source = *options.weight_stream;
    const int senders = exp.models.at(source.from).parallel.tp;
    const int receivers = exp.models.at(name).parallel.world();
    Link link{name, source.from, nlohmann::json::object()};
    link.args = {{"store", serve(name, senders + receivers)},
                 {"name", name},
                 {"senders", senders},
                 {"receivers", receivers},
                 {"bucket_bytes", source.bucket_mb << 20},
                 {"only_changed", source.only_changed}};
    links_.push_back(std::move(link));
  }
}

std::map<std::string, double> WeightLinks::sync() {
  const auto start = std::chrono::steady_clock::now();
  std::vector<GroupCall> sends, receives;
  for (const Link& link : links_) {
    sends.push_back(targets_.models.at(link.actor)->call("stream_weights", Batch{}, {}, link.args));
    receives.push_back(targets_.models.at(link.rollout)->call("stream_weights", Batch{}, {}, link.args));
  }
  std::map<std::string, double> metrics;
  for (size_t i = 0; i < links_.size(); ++i) {
    sends[i].get();
    Batch received = receives[i].get().merged;
    if (!received.meta().contains("metrics")) continue;
    for (auto& [key, value] : received.meta()["metrics"].items()) {
      if (!value.is_number()) continue;
      std::string name = key;
      if (links_.size() > 1 && name.rfind("weight_stream/", 0) == 0)
        name = "weight_stream/" + links_[i].rollout + "/" + name.substr(14);
      metrics[name] = value.get<double>();
    }
  }
  metrics["timing_s/weight_stream"] =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return metrics;
}

}  // namespace rlwb::core
