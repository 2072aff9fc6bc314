#include "core/config/weight_stream_checks.h"

namespace rlwb::core::config {
namespace {

std::string model_names(const Experiment& exp) {
  std::string names;
  for (const auto& [name, model] : exp.models) names += (names.empty() ? "" : ", ") + name;
  return names;
}

// One rollout model `name` taking its weights from `source`.
void check_link(const Experiment& exp, const std::map<std::string, ModelOptions>& models,
                const std::string& name, const std::string& source, ParseContext& ctx) {
  const std::string at = "models." + name + ".config.weight_stream.from";
  const ModelSpec& rollout = exp.models.at(name);
  auto src = exp.models.find(source);
  if (src == exp.models.end()) {
    ctx.add(at,
            "model '" + name + "' takes its weights from '" + source + "', which is no model of this file",
            "name the actor it follows; the models are: " + model_names(exp));
    return;
  }
  const ModelSpec& actor = src->second;
  if (actor.role != "actor") {
    ctx.add(at, "model '" + source + "' has role '" + actor.role + "'; weights stream from an actor only",
            "name a model of role actor");
    return;
  }
  if (actor.pool == rollout.pool)
    ctx.add("models." + name + ".pool",
            "model '" + name + "' shares pool '" + rollout.pool + "' with '" + source +
                "': a rollout model generates on a pool of its own",
            "put it on another pool, or let the actor generate itself in another layout "
            "(models." +
                source + ".parallel.generate, the 3D-HybridEngine)");
  if (actor.parallel.pp > 1)
    ctx.add("models." + source + ".parallel.pp",
            "'" + source + "' streams its weights to '" + name +
                "' but trains with pp = " + std::to_string(actor.parallel.pp) +
                " pipeline stages; streaming sends tensor-parallel shards only",
            "train '" + source + "' with pp: 1 (tp and dp as you like)");
  if (rollout.parallel.tp > 1 || rollout.parallel.pp > 1)
    ctx.add("models." + name + ".parallel",
            "rollout model '" + name + "' has tp = " + std::to_string(rollout.parallel.tp) +
                ", pp = " + std::to_string(rollout.parallel.pp) + "; each of its ranks holds the whole model",
            "write parallel: {dp: <its pool's workers>, tp: 1, pp: 1}");
  auto a = models.find(source), r = models.find(name);
  if (a == models.end() || r == models.end()) return;
  const std::string config = "models." + name + ".config.";
  if (a->second.model != r->second.model || a->second.checkpoint != r->second.checkpoint)
    ctx.add(config + (r->second.model ? "model" : "checkpoint"),
            "model '" + name + "' is not the network of '" + source + "' it takes the weights of",
            "write the same config.model (a YAML anchor: model: *arch) or checkpoint as models." + source);
  if (a->second.tokenizer.as_written != r->second.tokenizer.as_written)
    ctx.add(config + "tokenizer", "model '" + name + "' has another tokenizer than '" + source + "'",
            "write the same tokenizer as models." + source + ".config.tokenizer");
  if (a->second.rollout.temperature != r->second.rollout.temperature)
    ctx.add(config + "rollout.temperature",
            "'" + name + "' samples at temperature " + std::to_string(r->second.rollout.temperature) +
                " but '" + source + "' computes its log-probs at " +
                std::to_string(a->second.rollout.temperature),
            "write the same rollout.temperature for both");
}

}  // namespace

void check_weight_streams(const Experiment& exp, const std::map<std::string, ModelOptions>& models,
                          ParseContext& ctx) {
  std::map<std::string, std::string> fed;  // actor -> the rollout model it streams to
  for (const auto& [name, options] : models) {
    if (!options.weight_stream || options.weight_stream->from.empty() || !exp.models.count(name)) continue;
    const std::string& from = options.weight_stream->from;
    check_link(exp, models, name, from, ctx);
    // An actor's ranks hold one link (workers/roles/weight_link.h).
    if (auto [it, first] = fed.emplace(from, name); !first)
      ctx.add(
          "models." + name + ".config.weight_stream.from",
          "'" + from + "' streams its weights to '" + it->second +
              "' already; an actor feeds one rollout model",
          "give '" + it->second + "''s pool more workers (parallel.dp) instead of a second rollout model");
  }
}

}  // namespace rlwb::core::config
