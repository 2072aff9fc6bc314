// Loads a graph file: YAML -> document (with key lines) merged over its
// `defaults:` bases (defaults.h) -> overrides -> typed structs. Every wrong type is reported with its line
// and a hint; what the values mean is the validator's job.
#include <climits>
#include <fstream>
#include <sstream>
#include <tuple>

#include "core/graph/defaults.h"
#include "core/graph/experiment.h"
#include "core/graph/names.h"
#include "core/graph/overrides.h"
#include "core/graph/yaml_document.h"

namespace rlwb::core {
namespace {

using graph_detail::describe_value;
using graph_detail::join_path;
using nlohmann::json;

// Reads the typed fields of the document into an Experiment, collecting an
// issue for each value of the wrong type.
class StructReader {
 public:
  StructReader(Experiment& exp, std::vector<GraphIssue>& issues) : exp_(exp), issues_(issues) {}

  void read(const json& doc) {
    if (doc.is_null()) return;  // an empty file: the validator says what is missing
    if (!doc.is_object()) {
      issues_.push_back({exp_.file, 1, "",
                         "the file should be a map of sections (name:, pools:, models:, nodes:, "
                         "...), not " +
                             describe_value(doc),
                         "start the file with 'name: my_experiment' at column 1"});
      return;
    }
    get_text(doc, "name", "", exp_.name);
    get_text(doc, "algorithm", "", exp_.algorithm);
    if (doc.contains("seed")) {
      if (doc["seed"].is_number_integer())
        exp_.seed = doc["seed"].get<int64_t>();
      else
        wrong("seed", doc["seed"], "a whole number", "write e.g. seed: 1");
    }
    for_each_entry(doc, "pools", [&](const std::string& name, const json& v, const std::string& at) {
      PoolSpec pool;
      pool.name = name;
      get_int(v, "workers", at, pool.workers, "workers: 2");
      get_text(v, "device", at, pool.device);
      get_int(v, "threads", at, pool.threads, "threads: 2");
      exp_.pools[name] = pool;
    });
    for_each_entry(doc, "models", [&](const std::string& name, const json& v, const std::string& at) {
      ModelSpec model;
      model.name = name;
      get_text(v, "role", at, model.role);
      get_text(v, "pool", at, model.pool);
      if (const json* parallel = get_map(v, "parallel", at, "parallel: {dp: 2, tp: 1, pp: 1}"))
        get_parallel(*parallel, join_path(at, "parallel"), model.parallel);
      if (const json* config = get_map(v, "config", at, "config: {lr: 1.0e-6}")) model.config = *config;
      exp_.models[name] = model;
    });
    for_each_entry(doc, "rewards", [&](const std::string& name, const json& v, const std::string& at) {
      RewardSpec reward;
      reward.name = name;
      get_text(v, "type", at, reward.type);
      if (const json* config = get_map(v, "config", at, "config: {}")) reward.config = *config;
      exp_.rewards[name] = reward;
    });
    if (const json* task = get_map(doc, "task", "", "task: {name: arithmetic}")) {
      exp_.task = *task;
      std::string ignored;
      get_text(*task, "name", "task", ignored);
    }
    if (const json* trainer = get_map(doc, "trainer", "", "trainer: {steps: 10}")) {
      exp_.trainer = *trainer;
      int steps = 1;
      get_int(*trainer, "steps", "trainer", steps, "steps: 10");
    }
    read_nodes(doc);
    for_each_entry(doc, "layout", [&](const std::string&, const json&, const std::string&) {});
    if (doc.contains("layout") && doc["layout"].is_object()) exp_.layout = doc["layout"];
  }

 private:
  void read_nodes(const json& doc) {
    if (doc.contains("nodes")) read_node_list(doc["nodes"], "nodes", exp_.nodes);
    if (!doc.contains("trainer") || !doc["trainer"].is_object()) return;
    for (const auto& phase : trainer_phases()) {
      const json& trainer = doc["trainer"];
      if (!trainer.contains(phase) || !trainer[phase].is_object() || !trainer[phase].contains("nodes"))
        continue;
      read_node_list(trainer[phase]["nodes"], join_path(join_path("trainer", phase), "nodes"),
                     exp_.phase_nodes[phase]);
    }
  }

  void read_node_list(const json& nodes, const std::string& path, std::vector<NodeSpec>& out) {
    if (!nodes.is_array()) {
      wrong(path, nodes, "a list",
            "start each node with '- ', e.g.\n  nodes:\n    - {id: gen, call: actor.generate, "
            "in: [prompts], out: [responses]}");
      return;
    }
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string at = join_path(path, std::to_string(i));
      const json& item = nodes[i];
      if (!item.is_object()) {
        wrong(at, item, "a map", "write a node as {id: ..., call: <model>.<method>, in: [...], out: [...]}");
        continue;
      }
      NodeSpec node;
      if (auto line = exp_.lines.find(at); line != exp_.lines.end()) node.line = line->second;
      get_text(item, "id", at, node.id);
      get_text(item, "call", at, node.call);
      auto dot = node.call.find('.');
      node.target = node.call.substr(0, dot);
      node.method = dot == std::string::npos ? "" : node.call.substr(dot + 1);
      get_columns(item, "in", at, node.in, node.in_ports);
      get_columns(item, "out", at, node.out, node.out_ports);
      if (item.contains("args")) {
        if (item["args"].is_object())
          node.args = item["args"];
        else
          wrong(join_path(at, "args"), item["args"], "a map", "write e.g. args: {greedy: true}");
      }
      out.push_back(std::move(node));
    }
  }

  template <typename Fn>
  void for_each_entry(const json& doc, const std::string& section, Fn fn) {
    const json* entries = get_map(doc, section, "", section + ": {name: {...}}");
    if (!entries) return;
    for (const auto& [name, value] : entries->items()) {
      const std::string at = join_path(section, name);
      if (!value.is_object()) {
        wrong(at, value, "a map", "write the fields of '" + name + "' indented under it");
        continue;
      }
      fn(name, value, at);
    }
  }

  const json* get_map(const json& map, const std::string& key, const std::string& at,
                      const std::string& example) {
    if (!map.contains(key)) return nullptr;
    const json& value = map[key];
    if (value.is_object()) return &value;
    wrong(join_path(at, key), value, "a map", "write e.g. " + example);
    return nullptr;
  }

  // parallel: {dp, tp, pp} -- or the training layout under train: -- and
  // the generation layout under generate: {tp, pp, dp}.
  void get_parallel(const json& parallel, const std::string& at, ParallelSpec& out) {
    get_int(parallel, "dp", at, out.dp, "dp: 2");
    get_int(parallel, "tp", at, out.tp, "tp: 1");
    get_int(parallel, "pp", at, out.pp, "pp: 1");
    if (const json* train = get_map(parallel, "train", at, "train: {dp: 1, tp: 2, pp: 1}")) {
      const std::string train_at = join_path(at, "train");
      ParallelSpec written = out;
      get_int(*train, "dp", train_at, out.dp, "dp: 1");
      get_int(*train, "tp", train_at, out.tp, "tp: 2");
      get_int(*train, "pp", train_at, out.pp, "pp: 1");
      // Flat keys beside train: (a defaults: base may bring them) must agree.
      for (auto [key, flat, nested] :
           {std::tuple{"dp", written.dp, out.dp}, std::tuple{"tp", written.tp, out.tp},
            std::tuple{"pp", written.pp, out.pp}})
        if (parallel.contains(key) && train->contains(key) && flat != nested)
          issues_.push_back({exp_.file_of(join_path(train_at, key)), exp_.line_of(join_path(train_at, key)),
                             "",
                             "'" + join_path(at, key) + "' = " + std::to_string(flat) + " and '" +
                                 join_path(train_at, key) + "' = " + std::to_string(nested) +
                                 " both set the training layout",
                             "write the training layout once: flat (dp, tp, pp) or under train: -- a "
                             "file that inherits flat keys from its defaults: overrides them flat"});
    }
    if (const json* generate = get_map(parallel, "generate", at, "generate: {tp: 1}")) {
      const std::string generate_at = join_path(at, "generate");
      get_int(*generate, "tp", generate_at, out.generate_tp, "tp: 1");
      get_int(*generate, "pp", generate_at, out.generate_pp, "pp: 1");
      get_int(*generate, "dp", generate_at, out.generate_dp, "dp: 2");
      if (!out.has_generation_layout()) out.generate_tp = out.tp;  // generate: {} or {dp: n}: as training
    }
  }

  void get_text(const json& map, const std::string& key, const std::string& at, std::string& out) {
    if (!map.contains(key)) return;
    const json& value = map[key];
    if (value.is_string())
      out = value.get<std::string>();
    else if (value.is_structured() || value.is_null())
      wrong(join_path(at, key), value, "text", "write one name, e.g. " + key + ": name");
    else
      wrong(join_path(at, key), value, "text", "quote it: " + key + ": '" + value.dump() + "'");
  }

  void get_int(const json& map, const std::string& key, const std::string& at, int& out,
               const std::string& example) {
    if (!map.contains(key)) return;
    const json& value = map[key];
    if (value.is_number_integer() && value.get<int64_t>() >= INT_MIN && value.get<int64_t>() <= INT_MAX)
      out = value.get<int>();
    else
      wrong(join_path(at, key), value, "a whole number", "write e.g. " + example);
  }

  // `in`/`out`: a list of columns, each bound to the port of its name, or
  // a map {port: column} (columns then in the map's order, ports alongside).
  void get_columns(const json& map, const std::string& key, const std::string& at,
                   std::vector<std::string>& columns, std::vector<std::string>& ports) {
    if (!map.contains(key)) return;
    const json& value = map[key];
    const std::string path = join_path(at, key);
    if (value.is_object()) {
      for (const auto& [port, column] : value.items()) {
        if (column.is_string()) {
          ports.push_back(port);
          columns.push_back(column.get<std::string>());
        } else {
          wrong(join_path(path, port), column, "a column name",
                "write " + key + ": {" + port + ": <column>}, or quote the name");
        }
      }
      return;
    }
    if (!value.is_array()) {
      std::string example = value.is_string() ? value.get<std::string>() : "column_a, column_b";
      wrong(path, value, "a list of column names or a map {port: column}",
            "write " + key + ": [" + example + "]");
      return;
    }
    for (std::size_t i = 0; i < value.size(); ++i) {
      if (value[i].is_string())
        columns.push_back(value[i].get<std::string>());
      else
        wrong(join_path(path, std::to_string(i)), value[i], "a column name",
              value[i].is_object() ? "a list holds column names; write the whole " + key +
                                         " as a map {port: column, ...} to name a port apart from its column"
                                   : "quote it");
    }
  }

  void wrong(const std::string& path, const json& value, const std::string& expected,
             const std::string& hint) {
    issues_.push_back({exp_.file_of(path), exp_.line_of(path), "",
                       "'" + path + "' should be " + expected + ", not " + describe_value(value), hint});
  }

  Experiment& exp_;
  std::vector<GraphIssue>& issues_;
};

}  // namespace

Experiment load_experiment_text(const std::string& text, const std::string& file,
                                const std::vector<std::string>& overrides) {
  Experiment exp;
  exp.file = file;
  exp.overrides = overrides;
  std::vector<GraphIssue> issues;
  graph_detail::LineMap lines;
  json doc = graph_detail::parse_with_defaults(text, file, lines, exp.bases, issues);
  if (!issues.empty() && doc.is_null()) throw GraphError(issues);  // syntax error
  graph_detail::apply_overrides(doc, lines, overrides, file, issues);
  for (const auto& [path, origin] : lines) {
    exp.lines[path] = origin.line;
    if (origin.file != file) exp.line_files[path] = origin.file;
  }
  StructReader(exp, issues).read(doc);
  if (!issues.empty()) throw GraphError(issues);
  exp.raw = doc.is_null() ? json::object() : doc;
  // With bases the file alone does not say what runs: keep the resolved form.
  exp.text = overrides.empty() && exp.bases.empty() ? text : experiment_to_yaml(exp);
  return exp;
}

Experiment load_experiment_file(const std::string& path, const std::vector<std::string>& overrides) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw GraphError({{path, 0, "", "cannot read the experiment file",
                       "check the path; experiments live in experiments/*.yaml"}});
  std::stringstream text;
  text << in.rdbuf();
  return load_experiment_text(text.str(), path, overrides);
}

}  // namespace rlwb::core
