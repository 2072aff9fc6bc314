// experiment_to_yaml: the structs merged over `raw` (so keys the structs do
// not model survive), written in the canonical key order.
#include "core/graph/experiment.h"
#include "core/graph/yaml_document.h"

namespace rlwb::core {
namespace {

using nlohmann::json;

// Writes `key` when the loaded document had it or the value is not the default.
void put(json& map, const std::string& key, const json& value, const json& default_value) {
  if (map.contains(key) || value != default_value) map[key] = value;
}

// A model's `parallel`: the training layout where the file wrote it (flat
// or under train:), and the generation layout under generate:.
json parallel_of(const json& model_entry, const ParallelSpec& spec) {
  json parallel = model_entry.contains("parallel") && model_entry["parallel"].is_object()
                      ? model_entry["parallel"]
                      : json::object();
  const bool nested = parallel.contains("train") && parallel["train"].is_object();
  json& train = nested ? parallel["train"] : parallel;
  put(train, "dp", spec.dp, 1);
  put(train, "tp", spec.tp, 1);
  put(train, "pp", spec.pp, 1);
  if (nested)  // flat keys beside train: were equal to it (the loader refuses otherwise)
    for (const char* key : {"dp", "tp", "pp"}) parallel.erase(key);
  if (spec.has_generation_layout()) {
    json generate = parallel.contains("generate") && parallel["generate"].is_object() ? parallel["generate"]
                                                                                      : json::object();
    put(generate, "tp", spec.generation_tp(), spec.tp);
    put(generate, "pp", spec.generation_pp(), spec.pp);
    put(generate, "dp", spec.generate_dp, 0);
    if (generate.empty()) generate["tp"] = spec.generation_tp();
    parallel["generate"] = generate;
  } else {
    parallel.erase("generate");
  }
  return parallel;
}

json entry_of(const json& raw, const std::string& section, const std::string& name) {
  if (raw.contains(section) && raw[section].is_object() && raw[section].contains(name) &&
      raw[section][name].is_object())
    return raw[section][name];
  return json::object();
}

json raw_node(const json& raw, std::size_t index, const std::string& id) {
  if (!raw.contains("nodes") || !raw["nodes"].is_array()) return json::object();
  const json& nodes = raw["nodes"];
  auto same_id = [&](const json& n) { return n.is_object() && n.value("id", json()) == json(id); };
  if (index < nodes.size() && same_id(nodes[index])) return nodes[index];
  for (const auto& n : nodes)
    if (same_id(n)) return n;
  return json::object();
}

// A node's `in` or `out`: the list of columns, or the map {port: column}
// when the node was given ports (NodeSpec::in_ports).
json bindings(const std::vector<std::string>& columns, const std::vector<std::string>& ports) {
  if (ports.empty()) return columns;
  json map = json::object();
  for (std::size_t i = 0; i < columns.size(); ++i) map[i < ports.size() ? ports[i] : columns[i]] = columns[i];
  return map;
}

json document_of(const Experiment& exp) {
  json doc = exp.raw.is_object() ? exp.raw : json::object();
  put(doc, "name", exp.name, "");
  put(doc, "algorithm", exp.algorithm, "");
  put(doc, "seed", exp.seed, 1);

  json pools = json::object();
  for (const auto& [name, pool] : exp.pools) {
    json p = entry_of(exp.raw, "pools", name);
    put(p, "workers", pool.workers, 1);
    put(p, "device", pool.device, "cpu");
    put(p, "threads", pool.threads, 1);
    pools[name] = p;
  }
  put(doc, "pools", pools, json::object());

  json models = json::object();
  for (const auto& [name, model] : exp.models) {
    json m = entry_of(exp.raw, "models", name);
    put(m, "role", model.role, "");
    put(m, "pool", model.pool, "");
    put(m, "parallel", parallel_of(m, model.parallel), json::object());
    put(m, "config", model.config, json::object());
    models[name] = m;
  }
  put(doc, "models", models, json::object());

  json rewards = json::object();
  for (const auto& [name, reward] : exp.rewards) {
    json r = entry_of(exp.raw, "rewards", name);
    put(r, "type", reward.type, "");
    put(r, "config", reward.config, json::object());
    rewards[name] = r;
  }
  put(doc, "rewards", rewards, json::object());

  put(doc, "task", exp.task, json::object());
  put(doc, "trainer", exp.trainer, json::object());

  json nodes = json::array();
  for (std::size_t i = 0; i < exp.nodes.size(); ++i) {
    const NodeSpec& node = exp.nodes[i];
    json n = raw_node(exp.raw, i, node.id);
    put(n, "id", node.id, "");
    put(n, "call", node.call, "");
    put(n, "in", bindings(node.in, node.in_ports), json::array());
    put(n, "out", bindings(node.out, node.out_ports), json::array());
    put(n, "args", node.args, json::object());
    nodes.push_back(n);
  }
  put(doc, "nodes", nodes, json::array());
  put(doc, "layout", exp.layout, json::object());
  return doc;
}

}  // namespace

// Canonical order and inline style by position in the document.
graph_detail::YamlShape graph_detail::canonical_shape(const std::vector<std::string>& path) {
  auto is = [&](std::initializer_list<const char*> pattern) {
    if (path.size() != pattern.size()) return false;
    std::size_t i = 0;
    for (const char* part : pattern) {
      if (std::string(part) != "*" && path[i] != part) return false;
      ++i;
    }
    return true;
  };
  if (path.empty())
    return {
        {"name", "algorithm", "seed", "pools", "models", "rewards", "task", "trainer", "nodes", "layout"}};
  if (is({"pools", "*"})) return {{"workers", "device", "threads"}};
  if (is({"models", "*"})) return {{"role", "pool", "parallel", "config"}};
  if (is({"models", "*", "parallel"})) return {{"dp", "tp", "pp", "train", "generate"}, true};
  if (is({"models", "*", "parallel", "train"})) return {{"dp", "tp", "pp"}, true};
  if (is({"models", "*", "parallel", "generate"})) return {{"tp", "pp", "dp"}, true};
  if (is({"rewards", "*"})) return {{"type", "config"}};
  if (is({"task"})) return {{"name"}};
  if (is({"trainer"})) return {{"steps"}};
  if (is({"nodes", "#"})) return {{"id", "call", "in", "out"}};
  // A node's {port: column} map reads like its list form: on one line.
  if (is({"nodes", "#", "in"}) || is({"nodes", "#", "out"}) || is({"trainer", "*", "nodes", "#", "in"}) ||
      is({"trainer", "*", "nodes", "#", "out"}))
    return {{}, true};
  if (is({"layout", "*"})) return {{"x", "y"}, true};
  return {};
}

std::string experiment_to_yaml(const Experiment& exp) {
  return graph_detail::emit_yaml(document_of(exp), graph_detail::canonical_shape);
}

}  // namespace rlwb::core
