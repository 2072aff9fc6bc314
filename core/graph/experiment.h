// The experiment graph file (experiments/*.yaml) as plain structs, its
// loader with `key.path=value` overrides, and the validator that runs before
// anything starts. Used by the CLI (rlwb run / rlwb validate), the controller
// and the GUI editor. No LibTorch here.
//
// File shape (see docs/ARCHITECTURE.md for every key):
//   name: demo            algorithm: grpo          seed: 1
//   pools:   {main: {workers: 2, device: cpu}}
//   models:  {actor: {role: actor, pool: main, parallel: {dp: 2, tp: 1, pp: 1}, config: {...}}}
//   rewards: {math: {type: math, config: {...}}}
//   task:    {name: arithmetic, batch_size: 8, ...}
//   trainer: {steps: 3, ...}
//   nodes:   [{id: gen, call: actor.generate, in: [prompts], out: [responses]}, ...]
//   layout:  {gen: {x: 100, y: 40}}
// A node's call is `<model>.<method>`, `<reward>.<method>` or
// `builtin.<name>` (run inside the controller).
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace rlwb::core {

struct PoolSpec {
  std::string name;
  int workers = 1;            // processes in the pool
  std::string device = "cpu"; // "cpu" or "cuda" (one GPU per worker)
};

struct ParallelSpec {
  int dp = 1, tp = 1, pp = 1;
  int world() const { return dp * tp * pp; }
};

struct ModelSpec {
  std::string name;
  std::string role;   // worker role that implements it (actor, critic, ...)
  std::string pool;
  ParallelSpec parallel;
  nlohmann::json config = nlohmann::json::object();  // passed to the role's init
};

struct RewardSpec {
  std::string name;
  std::string type;
  nlohmann::json config = nlohmann::json::object();
};

struct NodeSpec {
  std::string id;
  std::string call;              // as written: "actor.generate", "builtin.grpo_advantage"
  std::string target;            // part before the first '.'
  std::string method;            // part after it
  std::vector<std::string> in, out;
  int line = 0;                  // 1-based line in the file, 0 when unknown
};

struct Experiment {
  std::string file;              // path it was loaded from ("" for text)
  std::string text;              // resolved YAML text (after overrides)
  std::string name, algorithm;
  int64_t seed = 1;
  std::map<std::string, PoolSpec> pools;
  std::map<std::string, ModelSpec> models;
  std::map<std::string, RewardSpec> rewards;
  nlohmann::json task = nlohmann::json::object();
  nlohmann::json trainer = nlohmann::json::object();
  std::vector<NodeSpec> nodes;   // in file order
  nlohmann::json layout = nlohmann::json::object();
  nlohmann::json raw = nlohmann::json::object();  // the whole resolved document

  int steps() const { return trainer.value("steps", 1); }
};

// One problem found in a graph file. `node` is empty for file-level issues.
struct GraphIssue {
  std::string file;
  int line = 0;
  std::string node;
  std::string message;  // what is wrong
  std::string hint;     // what to do about it
  std::string to_string() const;  // "file:line: node 'x': message (hint: ...)"
};

class GraphError : public std::runtime_error {
 public:
  explicit GraphError(std::vector<GraphIssue> issues);
  const std::vector<GraphIssue>& issues() const { return issues_; }

 private:
  std::vector<GraphIssue> issues_;
};

// What the validator may accept: methods per worker role and per reward
// type, builtins the controller runs, columns the task provides at the start
// of each step, and the machine's capacity.
struct MethodCatalog {
  std::map<std::string, std::set<std::string>> role_methods;
  std::map<std::string, std::set<std::string>> reward_methods;
  std::set<std::string> builtins;
  std::map<std::string, std::vector<std::string>> task_columns;  // task name -> columns
  int machine_gpus = 0;
  int machine_cpu_workers = 64;  // most CPU worker processes we allow
};

// Parses YAML text, applies overrides ("trainer.steps=5", value parsed as
// YAML), fills the structs. Throws GraphError (syntax errors with line).
Experiment load_experiment_text(const std::string& text, const std::string& file,
                                const std::vector<std::string>& overrides = {});
Experiment load_experiment_file(const std::string& path,
                                const std::vector<std::string>& overrides = {});

// Every problem in the experiment, in file order; empty when it can run.
std::vector<GraphIssue> validate_experiment(const Experiment& exp, const MethodCatalog& catalog);

// Serialises back to YAML (the GUI's save). Keys in the canonical order.
std::string experiment_to_yaml(const Experiment& exp);

}  // namespace rlwb::core
