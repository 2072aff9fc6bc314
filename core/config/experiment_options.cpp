#include "core/config/experiment_options.h"

#include "core/config/weight_stream_checks.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>

namespace rlwb::core::config {

using nlohmann::json;

namespace {

// The maps whose values the graph loader reads into core/graph's structs:
// only their keys are checked here.
void check_structure_keys(const Experiment& exp, ParseContext& ctx) {
  const json& raw = exp.raw;
  Section top(&raw, "", ctx);
  for (const char* key : {"name", "algorithm", "seed", "defaults", "task", "trainer", "layout", "profile"})
    top.raw(key, "", "");
  if (const json* pools = top.raw("pools", "", ""); pools && pools->is_object())
    for (const auto& [name, pool] : pools->items()) {
      Section p(&pool, "pools." + name, ctx);
      p.raw("workers", "", ""), p.raw("device", "", ""), p.raw("threads", "", "");
    }
  if (const json* models = top.raw("models", "", ""); models && models->is_object())
    for (const auto& [name, model] : models->items()) {
      Section m(&model, "models." + name, ctx);
      m.raw("role", "", ""), m.raw("pool", "", ""), m.raw("config", "", "");
      if (const json* parallel = m.raw("parallel", "", ""); parallel && parallel->is_object()) {
        Section p(parallel, "models." + name + ".parallel", ctx);
        p.raw("dp", "", ""), p.raw("tp", "", ""), p.raw("pp", "", "");
        for (const char* layout : {"train", "generate"})
          if (const json* sizes = p.raw(layout, "", ""); sizes && sizes->is_object()) {
            Section l(sizes, "models." + name + ".parallel." + layout, ctx);
            l.raw("dp", "", ""), l.raw("tp", "", ""), l.raw("pp", "", "");
          }
      }
    }
  if (const json* rewards = top.raw("rewards", "", ""); rewards && rewards->is_object())
    for (const auto& [name, reward] : rewards->items()) {
      Section r(&reward, "rewards." + name, ctx);
      r.raw("type", "", ""), r.raw("config", "", "");
    }
  auto check_nodes = [&](const json* nodes, const std::string& path) {
    if (!nodes || !nodes->is_array()) return;
    for (size_t i = 0; i < nodes->size(); ++i) {
      Section n(&(*nodes)[i], path + "." + std::to_string(i), ctx);
      for (const char* key : {"id", "call", "in", "out", "args"}) n.raw(key, "", "");
    }
  };
  check_nodes(top.raw("nodes", "", ""), "nodes");
  for (const auto& phase : trainer_phases())
    if (raw.contains("trainer") && raw["trainer"].is_object() && raw["trainer"].contains(phase) &&
        raw["trainer"][phase].is_object() && raw["trainer"][phase].contains("nodes"))
      check_nodes(&raw["trainer"][phase]["nodes"], "trainer." + phase + ".nodes");
}

// The models the nodes call (their data-parallel ranks split the rows).
std::set<std::string> models_called(const Experiment& exp, const std::vector<NodeSpec>& nodes) {
  std::set<std::string> names;
  for (const auto& node : nodes)
    if (exp.models.count(node.target)) names.insert(node.target);
  return names;
}

// `rows` rows go through the nodes of `where`: each model they call splits
// them over its dp ranks, which must divide them (padding rows would train
// twice).
void check_rows_divide(const Experiment& exp, const std::vector<NodeSpec>& nodes, int64_t rows,
                       const std::string& rows_key, const std::string& what, ParseContext& ctx) {
  for (const auto& name : models_called(exp, nodes)) {
    const int dp = exp.models.at(name).parallel.dp;
    if (dp > 1 && rows % dp != 0)
      ctx.add(rows_key,
              what + " " + std::to_string(rows) + " rows do not divide over model '" + name + "''s " +
                  std::to_string(dp) + " data-parallel ranks",
              "make the rows a multiple of " + std::to_string(dp) + " (models." + name + ".parallel.dp)");
  }
}

void check_batches(const Experiment& exp, const ExperimentOptions& o, ParseContext& ctx) {
  const TaskOptions& task = o.task;
  const int64_t rows = task.rows_per_step();
  check_rows_divide(exp, exp.nodes, rows, "task.batch_size",
                    "a step's batch_size x samples_per_prompt =", ctx);
  for (const auto& [name, model] : o.models) {
    const auto& spec = exp.models.at(name);
    const int64_t mini = model.ppo.mini_batch_size;
    const std::string at = "models." + name + ".config.ppo.mini_batch_size";
    const ModelSections sections = model_sections_of(spec.role);
    if (!(sections.actor_ppo || sections.critic_ppo) || mini == 0) continue;
    if (mini > rows)
      ctx.add(at,
              std::to_string(mini) + " rows is more than the step's batch of " + std::to_string(rows) +
                  " (task.batch_size x task.samples_per_prompt)",
              "lower it to " + std::to_string(rows) + " or less");
    else if (rows % mini != 0)
      ctx.add(at,
              "the step's " + std::to_string(rows) + " rows do not divide into mini-batches of " +
                  std::to_string(mini),
              "pick a divisor of " + std::to_string(rows));
    if (spec.parallel.dp > 1 && mini % spec.parallel.dp != 0)
      ctx.add(at,
              std::to_string(mini) + " rows do not divide over the " + std::to_string(spec.parallel.dp) +
                  " data-parallel ranks",
              "make it a multiple of " + std::to_string(spec.parallel.dp));
  }
  const TrainerOptions& t = o.trainer;
  if (t.warm_start.enabled && exp.phase_nodes.count("warm_start"))
    check_rows_divide(exp, exp.phase_nodes.at("warm_start"),
                      t.warm_start.batch_size.value_or(task.batch_size),
                      t.warm_start.batch_size ? "trainer.warm_start.batch_size" : "task.batch_size",
                      "a warm-start step's", ctx);
  if (t.eval.enabled && exp.phase_nodes.count("eval")) {
    const int64_t held_out = task.test_size();  // -1: as many as the task's files hold
    if (held_out == 0)
      ctx.add("trainer.eval", "task '" + task.name + "' has no held-out rows to evaluate on",
              task.name == "dataset" ? "name the held-out files in task.val_files, or remove trainer.eval"
                                     : "set task.test_size above 0, or remove trainer.eval");
    if (held_out < 0 && t.eval.batch_size)
      check_rows_divide(exp, exp.phase_nodes.at("eval"), *t.eval.batch_size, "trainer.eval.batch_size",
                        "the evaluation's", ctx);
    const int64_t eval_rows = std::min(t.eval.batch_size.value_or(held_out), held_out);
    if (held_out > 0)
      check_rows_divide(exp, exp.phase_nodes.at("eval"), eval_rows,
                        t.eval.batch_size ? "trainer.eval.batch_size" : "task.test_size", "the evaluation's",
                        ctx);
  }
}

// The layers, heads, key/value heads and MLP width of a checkpoint, from its HF
// config.json; nothing when there is none yet (a run may write it first)
// or it lacks them.
std::optional<ModelShapeOptions> checkpoint_shape(const std::string& dir) {
  std::ifstream in(std::filesystem::path(dir) / "config.json");
  if (!in) return std::nullopt;
  const json c = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!c.is_object() || !c.contains("num_attention_heads") || !c["num_attention_heads"].is_number_integer())
    return std::nullopt;
  ModelShapeOptions shape;
  shape.num_heads = c["num_attention_heads"].get<int64_t>();
  if (c.contains("num_key_value_heads") && c["num_key_value_heads"].is_number_integer())
    shape.num_kv_heads = c["num_key_value_heads"].get<int64_t>();
  if (c.contains("intermediate_size") && c["intermediate_size"].is_number_integer())
    shape.intermediate_size = c["intermediate_size"].get<int64_t>();
  if (c.contains("hidden_size") && c["hidden_size"].is_number_integer())
    shape.hidden_size = c["hidden_size"].get<int64_t>();
  if (c.contains("num_hidden_layers") && c["num_hidden_layers"].is_number_integer())
    shape.num_layers = c["num_hidden_layers"].get<int64_t>();
  return shape;
}

// What the model roles can split (workers/model/tensor_parallel.h): tp
// must divide the heads, the key/value heads and the MLP width of a fresh
// model, or of a checkpoint that is already there (the worker checks one
// that is not yet when it loads it); a vocabulary need not divide (it is
// split unevenly). pp must not exceed the layers (model/pipeline_parallel.h:
// a stage holds at least one block), and must divide them when the model
// generates with fewer stages.
void check_layouts(const Experiment& exp, const ExperimentOptions& o, ParseContext& ctx) {
  for (const auto& [name, model] : exp.models) {
    auto options = o.models.find(name);
    if (options == o.models.end()) continue;
    const std::string at = "models." + name + ".parallel";
    if (const int pp = model.parallel.pp; pp > 1) {
      const std::optional<ModelShapeOptions> shape =
          options->second.model ? options->second.model : checkpoint_shape(options->second.checkpoint);
      if (shape && shape->num_layers < pp)
        ctx.add(at + ".pp",
                "model '" + name + "' has pp = " + std::to_string(pp) + " pipeline stages but " +
                    (options->second.model ? "models." + name + ".config.model.num_layers"
                                           : options->second.checkpoint + "/config.json: num_hidden_layers") +
                    " = " + std::to_string(shape->num_layers) + " layers",
                "each stage holds at least one layer: choose pp <= " + std::to_string(shape->num_layers));
      // The 3D-HybridEngine gathers equal runs of layers into a generation stage.
      else if (shape && model.parallel.generation_pp() < pp && shape->num_layers % pp != 0)
        ctx.add(
            at + ".generate.pp",
            "model '" + name + "' generates with " + std::to_string(model.parallel.generation_pp()) +
                " pipeline stages of its " + std::to_string(pp) + " training stages, but its " +
                std::to_string(shape->num_layers) + " layers do not divide by pp = " + std::to_string(pp),
            "choose a pp that divides the layers, or generate with the training stages (leave generate.pp "
            "out)");
    }
    // The 3D-HybridEngine gathers equal shards of the vocabulary, which is
    // split over the pp * tp ranks of a replica: it must divide.
    const int tp = model.parallel.tp, vocab_parts = model.parallel.pp * tp;
    const std::optional<int64_t> vocab =
        options->second.model ? options->second.model->vocab_size : std::nullopt;
    if (model.parallel.micro_dp() > 1 && vocab && *vocab % vocab_parts != 0)
      ctx.add("models." + name + ".config.model.vocab_size",
              "model '" + name +
                  "' generates with another layout than it trains (parallel.generate), and its "
                  "vocab_size = " +
                  std::to_string(*vocab) + " does not divide by " +
                  (model.parallel.pp > 1 ? "pp * tp" : "tp") + " = " + std::to_string(vocab_parts),
              "pad the vocabulary: vocab_size: " +
                  std::to_string((*vocab + vocab_parts - 1) / vocab_parts * vocab_parts));
    if (tp <= 1) continue;
    const std::optional<ModelShapeOptions> shape_or =
        options->second.model ? options->second.model : checkpoint_shape(options->second.checkpoint);
    if (!shape_or) continue;
    const ModelShapeOptions& shape = *shape_or;
    const bool fresh = options->second.model.has_value();
    const std::string where =
        fresh ? "models." + name + ".config.model." : options->second.checkpoint + "/config.json: ";
    const std::array<std::pair<const char*, int64_t>, 3> sizes = {
        std::pair<const char*, int64_t>{fresh ? "num_heads" : "num_attention_heads", shape.num_heads},
        {fresh ? "num_kv_heads" : "num_key_value_heads", shape.resolved_kv_heads()},
        {"intermediate_size", shape.resolved_intermediate_size()}};
    for (auto [setting, value] : sizes) {
      if (value % tp == 0) continue;
      ctx.add(at + ".tp",
              "model '" + name + "' has tp = " + std::to_string(tp) + ", which does not divide " + where +
                  setting + " = " + std::to_string(value),
              "choose a tp that divides " + std::string(sizes[0].first) + " (" +
                  std::to_string(sizes[0].second) + "), " + sizes[1].first + " (" +
                  std::to_string(sizes[1].second) + ") and intermediate_size (" +
                  std::to_string(sizes[2].second) + "), or change the model's shape");
    }
  }
}

// The model whose tokenizer the prompts are written for: the one of role
// actor, else the first that generates (reads a rollout section).
const ModelOptions* generating_model(const Experiment& exp, const ExperimentOptions& o) {
  for (const auto& [name, model] : exp.models)
    if (model.role == "actor") return &o.models.at(name);
  for (const auto& [name, model] : exp.models)
    if (model_sections_of(model.role).rollout) return &o.models.at(name);
  return nullptr;
}

}  // namespace

ExperimentOptions parse_experiment_options(const Experiment& exp, ParseContext& ctx) {
  ExperimentOptions o;
  check_structure_keys(exp, ctx);
  o.task = parse_task_options(exp.task, ctx);
  o.trainer = parse_trainer_options(exp.trainer, ctx);
  o.profile = parse_profile_options(exp.raw.value("profile", json::object()), ctx);
  if (o.profile.enabled && o.profile.step_range.first > o.trainer.steps)
    ctx.add("profile.steps",
            "profiles from step " + std::to_string(o.profile.step_range.first) + " but the run has " +
                std::to_string(o.trainer.steps) + " steps (trainer.steps)",
            "choose steps within 1-" + std::to_string(o.trainer.steps));
  for (const auto& [name, model] : exp.models)
    o.models[name] = parse_model_options(model.role, model.config, "models." + name + ".config", ctx);
  if (o.task.name == "dataset" && !o.task.dataset.tokenizer_written)
    if (const ModelOptions* actor = generating_model(exp, o)) o.task.dataset.tokenizer = actor->tokenizer;
  if (ctx.ok()) check_batches(exp, o, ctx);
  check_layouts(exp, o, ctx);
  check_weight_streams(exp, o.models, ctx);
  return o;
}

ExperimentOptions parse_experiment_options(const Experiment& exp) {
  ParseContext ctx(&exp.lines);
  ExperimentOptions o = parse_experiment_options(exp, ctx);
  ctx.throw_if_any();
  return o;
}

std::string settings_reference() {
  SettingsDoc doc;
  ParseContext ctx(nullptr, &doc);
  const json empty = json::object();
  parse_task_options(empty, ctx);
  parse_trainer_options(empty, ctx);
  parse_profile_options(empty, ctx);
  for (const char* role : {"actor", "critic", "rollout"})
    parse_model_options(role, empty, "models.<name>.config", ctx);
  return doc.markdown();
}

int64_t trainer_steps(const Experiment& exp) {
  ParseContext ignored;
  return parse_trainer_options(exp.trainer, ignored).steps;
}

}  // namespace rlwb::core::config
