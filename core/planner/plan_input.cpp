#include "core/planner/plan_input.h"

#include <filesystem>
#include <fstream>
#include <map>

#include "core/config/experiment_options.h"
#include "core/planner/plan_error.h"

namespace rlwb::core::planner {
namespace {

// A checkpoint's shape from its Hugging Face config.json.
ModelShape checkpoint_shape(const std::string& model, const std::string& dir, bool value_head) {
  const std::string path = (std::filesystem::path(dir) / "config.json").string();
  std::ifstream in(path);
  if (!in)
    throw PlanError("models." + model + ".config.checkpoint: cannot read " + path +
                    "; the planner needs the checkpoint's config.json for its shape");
  try {
    const nlohmann::json c = nlohmann::json::parse(in);
    ModelShape s;
    s.hidden_size = c.at("hidden_size").get<int64_t>();
    s.intermediate_size = c.at("intermediate_size").get<int64_t>();
    s.num_layers = c.at("num_hidden_layers").get<int64_t>();
    s.num_heads = c.at("num_attention_heads").get<int64_t>();
    s.num_kv_heads = c.value("num_key_value_heads", s.num_heads);
    s.vocab_size = c.at("vocab_size").get<int64_t>();
    s.tied_embeddings = c.value("tie_word_embeddings", false);
    s.value_head = value_head;
    return s;
  } catch (const nlohmann::json::exception& e) {
    throw PlanError(path + ": " + e.what() + "; the planner reads hidden_size, intermediate_size, " +
                    "num_hidden_layers, num_attention_heads, num_key_value_heads and vocab_size");
  }
}

int64_t digits(int64_t n) {
  int64_t d = 1;
  while (n >= 10) n /= 10, ++d;
  return d;
}

// The longest prompt's tokens, as the task makes them (see the header).
int64_t task_prompt_length(const config::TaskOptions& task, const config::ModelOptions& actor) {
  if (task.name == "arithmetic") return 1 + 2 * digits(task.arithmetic.max_operand) + 2;  // <bos>a+b=
  if (task.name == "dataset") return task.dataset.max_prompt_length;
  const int64_t context = actor.model ? actor.model->max_position_embeddings : 2048;
  return std::max<int64_t>(1, context - actor.rollout.max_new_tokens);
}

StageKind kind_of_method(const std::string& method) {
  if (method == "generate") return StageKind::kGenerate;
  if (method == "update" || method == "sft_update") return StageKind::kTrain;
  return StageKind::kForward;
}

}  // namespace

const char* stage_kind_name(StageKind kind) {
  switch (kind) {
    case StageKind::kGenerate:
      return "generate";
    case StageKind::kForward:
      return "forward";
    case StageKind::kTrain:
      return "train";
    case StageKind::kController:
      return "controller";
  }
  return "?";
}

int PlanInput::model_index(const std::string& name) const {
  for (std::size_t i = 0; i < models.size(); ++i)
    if (models[i].name == name) return static_cast<int>(i);
  return -1;
}

PlanInput plan_input_of(const Experiment& exp, const TokenizerVocab& vocab, int64_t prompt_length) {
  config::ExperimentOptions options;
  try {
    options = config::parse_experiment_options(exp);
  } catch (const std::exception& e) {
    throw PlanError(std::string(e.what()) + "\n(run 'rlwb validate " + exp.file + "' for every problem)");
  }
  PlanInput input;
  input.experiment = exp.name;
  for (const auto& [name, spec] : exp.models) {
    const config::ModelSections sections = config::model_sections_of(spec.role);
    if (!sections.network)
      throw PlanError("models." + name + " (role " + spec.role +
                      ") has no transformer; the planner places transformer models only");
    const config::ModelOptions& o = options.models.at(name);
    // Its pool is fixed apart from the actor's (weight_stream_checks.h);
    // the planner's placements colocate or split models freely.
    if (o.weight_stream)
      throw PlanError(
          "models." + name + " (role " + spec.role + ") generates on a pool of its own with '" +
          o.weight_stream->from +
          "''s weights streamed to it (config.weight_stream); the planner places models that "
          "generate themselves, in their own layout or another (parallel.generate), not "
          "rollout pools: plan the file with the actor generating (e.g. experiments/grpo_tp.yaml), "
          "or size this file's pools by hand");
    const bool value_head = !sections.rollout;
    PlannedModel m;
    m.name = name;
    m.role = spec.role;
    m.shape = o.model ? model_shape_of(*o.model, o.model->vocab_size ? 0 : vocab(o.tokenizer), value_head)
                      : checkpoint_shape(name, o.checkpoint, value_head);
    m.micro_batch_size = o.micro_batch_size;
    m.epochs = o.ppo.epochs;
    m.mini_batch_size = o.ppo.mini_batch_size;
    input.models.push_back(m);
  }
  // Stages by column: a node waits for the nodes writing what it reads.
  std::map<std::string, int> writer;
  std::vector<Stage> stages;
  for (const NodeSpec& node : exp.nodes) {
    Stage s;
    s.node = node.id;
    s.model = input.model_index(node.target);
    s.kind = s.model < 0 ? StageKind::kController : kind_of_method(node.method);
    stages.push_back(s);
  }
  for (std::size_t i = 0; i < exp.nodes.size(); ++i)
    for (const auto& column : exp.nodes[i].out) writer[column] = static_cast<int>(i);
  for (std::size_t i = 0; i < exp.nodes.size(); ++i)
    for (const auto& column : exp.nodes[i].in)
      if (auto w = writer.find(column); w != writer.end() && w->second != static_cast<int>(i))
        stages[i].after.push_back(w->second);
  // Topological order, ties in file order.
  std::vector<int> order, placed(stages.size(), -1);
  while (order.size() < stages.size()) {
    bool progressed = false;
    for (std::size_t i = 0; i < stages.size(); ++i) {
      if (placed[i] >= 0) continue;
      bool ready = true;
      for (int a : stages[i].after) ready = ready && placed[a] >= 0;
      if (!ready) continue;
      placed[i] = static_cast<int>(order.size());
      order.push_back(static_cast<int>(i));
      progressed = true;
    }
    if (!progressed)
      throw PlanError(exp.file + ": the graph's nodes wait for each other in a cycle; run 'rlwb validate " +
                      exp.file + "'");
  }
  for (int i : order) {
    Stage s = stages[i];
    for (int& a : s.after) a = placed[a];
    input.stages.push_back(s);
    if (s.model >= 0 && s.kind == StageKind::kTrain) input.models[s.model].trained = true;
    if (s.model >= 0 && s.kind == StageKind::kGenerate) input.models[s.model].generates = true;
  }
  int generator = -1;
  for (std::size_t i = 0; i < input.models.size(); ++i)
    if (input.models[i].generates) generator = static_cast<int>(i);
  if (generator < 0)
    throw PlanError(exp.file +
                    ": no node calls <model>.generate; the planner plans RL steps that sample from an actor");
  input.workload.prompts = options.task.batch_size;
  input.workload.samples_per_prompt = options.task.samples_per_prompt;
  const config::ModelOptions& actor = options.models.at(input.models[generator].name);
  input.workload.response_length = actor.rollout.max_new_tokens;
  input.workload.prompt_length = prompt_length > 0 ? prompt_length : task_prompt_length(options.task, actor);
  return input;
}

}  // namespace rlwb::core::planner
