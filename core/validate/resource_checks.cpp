// Checks of what the graph runs on: pools against the machine, models
// against roles and pools, rewards against reward types, the task's name and
// the editor's layout.
#include <algorithm>
#include <tuple>

#include "core/validate/checks.h"
#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

template <typename Map>
std::vector<std::string> keys_of(const Map& map) {
  std::vector<std::string> keys;
  for (const auto& [key, _] : map) keys.push_back(key);
  return keys;
}

// Total workers of the pools on `device` against what the machine has.
void check_capacity(IssueList& out, const std::string& device, int capacity,
                    const std::string& capacity_name) {
  int total = 0;
  std::string first, parts;
  for (const auto& [name, pool] : out.exp().pools) {
    if (pool.device != device) continue;
    total += pool.workers;
    if (first.empty()) first = name;
    parts += (parts.empty() ? "" : ", ") + name + ": " + std::to_string(pool.workers);
  }
  if (total <= capacity) return;
  out.add(out.line("pools." + first), "",
          "the " + device + " pools need " + std::to_string(total) + " workers (" + parts +
              ") but this machine has " + std::to_string(capacity) + " " + capacity_name,
          "lower workers in the " + device +
              " pools (and the models' parallel sizes with them), "
              "or launch on a cluster with more " +
              capacity_name);
}

void check_pools(IssueList& out, const MethodCatalog& catalog) {
  for (const auto& [name, pool] : out.exp().pools) {
    const std::string at = "pools." + name;
    if (pool.workers < 1)
      out.add(out.line(at + ".workers"), "",
              "pool '" + name + "' has " + std::to_string(pool.workers) + " workers",
              "set workers: 1 or more");
    if (pool.threads < 1)
      out.add(out.line(at + ".threads"), "",
              "pool '" + name + "' has " + std::to_string(pool.threads) + " threads per worker",
              "set threads: 1 or more (each worker's intra-op threads; workers x threads at most the "
              "host's cores)");
    if (pool.device != "cpu" && pool.device != "cuda")
      out.add(out.line(at + ".device"), "", "pool '" + name + "' has device '" + pool.device + "'",
              "use device: cpu or device: cuda (one GPU per worker)");
  }
  check_capacity(out, "cuda", catalog.machine_gpus, "GPUs");
  check_capacity(out, "cpu", catalog.machine_cpu_workers, "CPU worker slots");
}

// The generation layout of the 3D-HybridEngine (workers/hybrid_engine/
// hybrid_layout.h): only for a role that generates; each generation shard
// must be a union of training shards (t_g divides t, p_g divides p: what
// core::generation_mesh needs to group the replicas).
void check_generation_layout(IssueList& out, const ModelSpec& model, const MethodCatalog& catalog) {
  const ParallelSpec& p = model.parallel;
  if (!p.has_generation_layout() && p.generate_dp == 0) return;
  const std::string at = "models." + model.name + ".parallel.generate";
  auto role = catalog.role_methods.find(model.role);
  if (role != catalog.role_methods.end() && !role->second.count("generate")) {
    out.add(out.line(at), "",
            "model '" + model.name + "' has a generation layout, but its role '" + model.role +
                "' does not generate",
            "remove parallel.generate: only a model whose role has a generate method (actor, reference) "
            "generates with a layout of its own");
    return;
  }
  auto divisors = [](int n) {
    std::string list;
    for (int k = 1; k <= n; ++k)
      if (n % k == 0) list += (list.empty() ? "" : ", ") + std::to_string(k);
    return list;
  };
  bool sizes_ok = true;
  for (auto [axis, size, training] :
       {std::tuple{"tp", p.generation_tp(), p.tp}, {"pp", p.generation_pp(), p.pp}}) {
    if (training < 1) return;  // check_parallel said so
    if (size >= 1 && training % size == 0) continue;
    sizes_ok = false;
    out.add(out.line(at + "." + axis), "",
            "model '" + model.name + "' generates with " + axis + " = " + std::to_string(size) +
                ", which does not divide its training " + axis + " = " + std::to_string(training),
            "use a divisor of the training " + std::string(axis) + " (" + divisors(training) +
                "): each rank's generation shard is then a union of training shards, gathered without a "
                "second copy (docs/model.md, 3D-HybridEngine)");
  }
  if (sizes_ok && p.generate_dp != 0 && p.generate_dp != p.generation_replicas())
    out.add(out.line(at + ".dp"), "",
            "model '" + model.name + "' has generate.dp = " + std::to_string(p.generate_dp) + ", but " +
                std::to_string(p.world()) + " ranks generating at tp = " + std::to_string(p.generation_tp()) +
                ", pp = " + std::to_string(p.generation_pp()) + " make " +
                std::to_string(p.generation_replicas()) + " generation replicas",
            "set generate.dp: " + std::to_string(p.generation_replicas()) +
                " or leave it out (it follows from the ranks and the generation tp and pp)");
}

void check_parallel(IssueList& out, const ModelSpec& model) {
  const std::string at = "models." + model.name + ".parallel";
  const ParallelSpec& p = model.parallel;
  bool sizes_ok = true;
  for (auto [axis, size] : {std::pair{"dp", p.dp}, {"tp", p.tp}, {"pp", p.pp}}) {
    if (size >= 1) continue;
    sizes_ok = false;
    out.add(out.line(at + "." + axis), "",
            "model '" + model.name + "' has parallel " + axis + " = " + std::to_string(size),
            "dp, tp and pp are 1 or more (1 means not split along that axis)");
  }
  auto pool = out.exp().pools.find(model.pool);
  if (!sizes_ok || pool == out.exp().pools.end() || p.world() == pool->second.workers) return;
  const int workers = pool->second.workers;
  std::string hint = "dp*tp*pp must equal the pool's workers: ";
  if (workers > 0 && workers % (p.tp * p.pp) == 0)
    hint += "set dp: " + std::to_string(workers / (p.tp * p.pp)) + ", or ";
  hint += "set pool '" + model.pool + "' workers: " + std::to_string(p.world());
  out.add(out.line(at), "",
          "model '" + model.name + "' has dp*tp*pp = " + std::to_string(p.dp) + "*" + std::to_string(p.tp) +
              "*" + std::to_string(p.pp) + " = " + std::to_string(p.world()) + " ranks but pool '" +
              model.pool + "' has " + std::to_string(workers) + " workers",
          hint);
}

void check_models(IssueList& out, const MethodCatalog& catalog) {
  const auto roles = keys_of(catalog.role_methods);
  const auto pools = keys_of(out.exp().pools);
  for (const auto& [name, model] : out.exp().models) {
    const std::string at = "models." + name;
    if (name == "builtin")
      out.add(out.line(at), "", "a model is named 'builtin', the prefix of the controller's builtins",
              "rename the model");
    if (model.role.empty())
      out.add(out.line(at), "", "model '" + name + "' has no role",
              "add role: <one of " + list_names(roles) + ">");
    else if (!catalog.role_methods.count(model.role))
      out.add(out.line(at + ".role"), "",
              "model '" + name + "' has role '" + model.role + "' that no worker implements",
              "roles: " + list_names(roles) + "." + did_you_mean(model.role, roles));
    if (model.pool.empty())
      out.add(out.line(at), "", "model '" + name + "' has no pool",
              "add pool: <one of " + list_names(pools) + ">");
    else if (!out.exp().pools.count(model.pool))
      out.add(out.line(at + ".pool"), "",
              "model '" + name + "' is in pool '" + model.pool + "' that is not defined",
              "pools: " + list_names(pools) + "." + did_you_mean(model.pool, pools) +
                  " Or define it under pools:");
    check_parallel(out, model);
    check_generation_layout(out, model, catalog);
  }
}

// The reward type's own check of `rewards.<name>.config`; its message
// starts with the key, whose line the issue gets.
void check_reward_settings(IssueList& out, const RewardSpec& reward, const RewardSettingsCheck& check) {
  try {
    check(reward, out.exp());
  } catch (const std::exception& e) {
    const std::string message = e.what();
    const std::string prefix = "rewards." + reward.name + ".config";
    std::string key = prefix;
    if (message.rfind(prefix, 0) == 0) key = message.substr(0, message.find_first_of(": ", prefix.size()));
    out.add(out.line(key), "", message, "see docs/rewards.md for the settings of type " + reward.type);
  }
}

void check_rewards(IssueList& out, const MethodCatalog& catalog) {
  const auto types = keys_of(catalog.reward_methods);
  for (const auto& [name, reward] : out.exp().rewards) {
    const std::string at = "rewards." + name;
    if (out.exp().models.count(name) || name == "builtin")
      out.add(out.line(at), "", "the name '" + name + "' is used by a model or builtins too",
              "rename the reward; a node's call must say which one it means");
    if (reward.type.empty())
      out.add(out.line(at), "", "reward '" + name + "' has no type",
              "add type: <one of " + list_names(types) + ">");
    else if (!catalog.reward_methods.count(reward.type))
      out.add(out.line(at + ".type"), "",
              "reward '" + name + "' has type '" + reward.type + "' that no reward module implements",
              "types: " + list_names(types) + "." + did_you_mean(reward.type, types));
    else if (auto check = catalog.reward_checks.find(reward.type); check != catalog.reward_checks.end())
      check_reward_settings(out, reward, check->second);
  }
}

void check_task_and_trainer(IssueList& out, const MethodCatalog& catalog) {
  const Experiment& exp = out.exp();
  const auto tasks = keys_of(catalog.task_columns);
  const nlohmann::json& task_name = exp.task.contains("name") ? exp.task["name"] : nlohmann::json("");
  const std::string name = task_name.is_string() ? task_name.get<std::string>() : "";
  if (!task_name.is_string())
    out.add(out.line("task.name"), "", "task.name should be text, not " + task_name.dump(),
            "write task: {name: <one of " + list_names(tasks) + ">}");
  else if (name.empty())
    out.add(out.line("task"), "", "the task has no name",
            "add task: {name: <one of " + list_names(tasks) + ">}");
  else if (!catalog.task_columns.count(name))
    out.add(out.line("task.name"), "", "unknown task '" + name + "'",
            "tasks: " + list_names(tasks) + "." + did_you_mean(name, tasks));
  if (exp.nodes.empty())
    out.add(out.line("nodes"), "", "the experiment has no nodes",
            "add nodes: [{id: gen, call: actor.generate, in: [prompts], out: [responses]}, ...]");
}

// Layout keys name the graph's nodes by id and a trainer phase's nodes as
// "<phase>/<id>" (the editor's canvas keys), so a graph node's id may not
// start with a phase's name and a slash: its position would be read as
// that phase's node's.
void check_layout(IssueList& out) {
  std::vector<std::string> ids;
  for (std::size_t i = 0; i < out.exp().nodes.size(); ++i) {
    const NodeSpec& node = out.exp().nodes[i];
    ids.push_back(node.id);
    for (const auto& phase : trainer_phases())
      if (node.id.rfind(phase + "/", 0) == 0)
        out.add(out.node_line(i, "id"), node.id,
                "the id starts with '" + phase + "/', which layout: uses for the " + phase + " phase's nodes",
                "rename the node, e.g. to '" + phase + "_" + node.id.substr(phase.size() + 1) + "'");
  }
  for (const auto& [phase, nodes] : out.exp().phase_nodes)
    for (const auto& node : nodes) ids.push_back(phase + "/" + node.id);
  // A phase the trainer does not set (`~trainer.eval` on the command line)
  // keeps its nodes' positions for when it is back: no warning for those.
  const nlohmann::json& trainer = out.exp().trainer;
  auto of_an_unset_phase = [&](const std::string& key) {
    for (const auto& phase : trainer_phases())
      if (key.rfind(phase + "/", 0) == 0) return !trainer.is_object() || !trainer.contains(phase);
    return false;
  };
  for (const auto& [id, _] : out.exp().layout.items()) {
    if (std::find(ids.begin(), ids.end(), id) != ids.end() || of_an_unset_phase(id)) continue;
    out.add(out.line("layout." + id), id, "has a layout position but no node has this id",
            "remove it from layout:, or rename it to a node id." + did_you_mean(id, ids), Severity::warning);
  }
}

}  // namespace

void check_resources(IssueList& out, const MethodCatalog& catalog) {
  check_pools(out, catalog);
  check_models(out, catalog);
  check_rewards(out, catalog);
  check_task_and_trainer(out, catalog);
  check_layout(out);
}

}  // namespace rlwb::core::graph_detail
