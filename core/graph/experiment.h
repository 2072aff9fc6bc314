// The experiment graph file (experiments/*.yaml) as plain structs, its
// loader with `key.path=value` overrides, and the validator that runs before
// anything starts. Used by the CLI (rlwb run / rlwb validate), the controller
// and the GUI editor. No LibTorch here.
//
// File shape (docs/graph-file.md has every key, the override syntax and the
// checks):
//   name: demo            algorithm: grpo          seed: 1
//   pools:   {main: {workers: 2, device: cpu}}
//   models:  {actor: {role: actor, pool: main, parallel: {dp: 2, tp: 1, pp: 1}, config: {...}}}
//            (an actor may generate with another layout than it trains:
//            parallel: {train: {tp: 2}, generate: {tp: 1}}, ParallelSpec)
//   rewards: {math: {type: math, config: {...}}}
//   task:    {name: arithmetic, batch_size: 8, ...}
//   trainer: {steps: 3, ...}
//   nodes:   [{id: gen, call: actor.generate, in: [prompts], out: [responses]}, ...]
//   layout:  {gen: {x: 100, y: 40}}
// A node's call is `<model>.<method>`, `<reward>.<method>` or
// `builtin.<name>` (run inside the controller). Its `in`/`out` bind the
// callee's named ports (core/graph/ports.h) to columns: a list when each
// column is named like its port, a map {port: column} where they differ.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/graph/ports.h"

namespace rlwb::core {

struct PoolSpec {
  std::string name;
  int workers = 1;             // processes in the pool
  std::string device = "cpu";  // "cpu" or "cuda" (one GPU per worker)
  int threads = 1;             // intra-op threads of each worker (its OMP_NUM_THREADS)
  bool operator==(const PoolSpec&) const = default;
};

// A model's layout over its pool's ranks: dp replicas of pp stages of tp
// shards. A model that generates may do so with its own tensor and
// pipeline sizes (HybridFlow's 3D-HybridEngine, workers/hybrid_engine/):
// generate_tp / generate_pp, 0 when it generates as it trains. Then each
// training replica generates as (tp pp)/(generate_tp generate_pp)
// replicas (micro-DP groups of that many ranks, hybrid_layout.h).
struct ParallelSpec {
  int dp = 1, tp = 1, pp = 1;
  int generate_tp = 0, generate_pp = 0;
  int generate_dp = 0;  // as written (0: not written); must equal generation_replicas()
  int world() const { return dp * tp * pp; }
  bool has_generation_layout() const { return generate_tp > 0 || generate_pp > 0; }
  int generation_tp() const { return generate_tp > 0 ? generate_tp : tp; }
  int generation_pp() const { return generate_pp > 0 ? generate_pp : pp; }
  // Generation replicas in each training replica (the micro-DP size d_g),
  // and in the pool; 0 when the generation sizes do not divide the
  // training ones (the validator refuses that).
  int micro_dp() const {
    const int shard = generation_tp() * generation_pp();
    return shard > 0 && (tp * pp) % shard == 0 ? tp * pp / shard : 0;
  }
  int generation_replicas() const { return dp * micro_dp(); }
  bool operator==(const ParallelSpec&) const = default;
};

struct ModelSpec {
  std::string name;
  std::string role;  // worker role that implements it (actor, critic, ...)
  std::string pool;
  ParallelSpec parallel;
  nlohmann::json config = nlohmann::json::object();  // passed to the role's init
  bool operator==(const ModelSpec&) const = default;
};

struct RewardSpec {
  std::string name;
  std::string type;
  nlohmann::json config = nlohmann::json::object();
  bool operator==(const RewardSpec&) const = default;
};

struct NodeSpec {
  std::string id;
  std::string call;    // as written: "actor.generate", "builtin.grpo_advantage";
                       // the saved file takes the call from here
  std::string target;  // part before the first '.'
  std::string method;  // part after it
  // The columns the node reads and writes, in file order: what the runner
  // waits for and the dataflow checks follow.
  std::vector<std::string> in, out;
  // The callee's port of each column, by position (in_ports[i] is in[i]'s
  // port). Empty in the list form (`in: [a, b]`: every column is the port
  // of its own name); the map form (`in: {port: column}`) fills it, and the
  // writer writes a map when it is not empty.
  std::vector<std::string> in_ports, out_ports;
  // Per-call options for the method (e.g. {greedy: true} on a generate
  // node); they reach the worker as CallContext::args.
  nlohmann::json args = nlohmann::json::object();
  int line = 0;  // 1-based line in the file (file_of("nodes.<i>")), 0 when unknown
  bool operator==(const NodeSpec&) const = default;  // includes line; see same_content()

  // The port in[i] / out[i] is bound to.
  const std::string& in_port(std::size_t i) const { return i < in_ports.size() ? in_ports[i] : in[i]; }
  const std::string& out_port(std::size_t i) const { return i < out_ports.size() ? out_ports[i] : out[i]; }
};

struct Experiment {
  std::string file;  // path it was loaded from ("" for text)
  std::string text;  // resolved YAML text (after overrides)
  std::string name, algorithm;
  int64_t seed = 1;
  std::map<std::string, PoolSpec> pools;
  std::map<std::string, ModelSpec> models;
  std::map<std::string, RewardSpec> rewards;
  nlohmann::json task = nlohmann::json::object();
  nlohmann::json trainer = nlohmann::json::object();
  std::vector<NodeSpec> nodes;  // in file order
  // The small graphs that trainer phases run around the steps
  // (trainer.<phase>.nodes for each of trainer_phases()), in the nodes'
  // shape; read by the loader from `trainer`, which stays the source the
  // writer saves.
  std::map<std::string, std::vector<NodeSpec>> phase_nodes;
  nlohmann::json layout = nlohmann::json::object();
  nlohmann::json raw = nlohmann::json::object();  // the whole resolved document

  // Where each key was written: dotted path ("trainer.steps", "nodes.2.in",
  // "models.actor.parallel.dp"; list items by 0-based index) -> 1-based line
  // in `file` as written, or in the base file that `line_files` names for
  // it. Lines always refer to the files, also after overrides; a key that
  // an override added or replaced wholesale has no line of its own. Empty
  // for experiments built in code.
  std::map<std::string, int> lines;
  // The keys of `lines` that were written in a base file (see `bases`), not
  // in `file`: dotted path -> that file. Empty without `defaults:`.
  std::map<std::string, std::string> line_files;
  // The files `defaults:` named, recursively, in the order they were merged
  // (a base's own bases before it); the file itself is merged over them.
  std::vector<std::string> bases;
  std::vector<std::string> overrides;  // as given to the loader, in order

  // Line of `path`, else of its nearest ancestor that has one; 0 if none.
  int line_of(const std::string& path) const;
  // The file that line_of(path) refers to: a base's path or `file`.
  std::string file_of(const std::string& path) const;
};

// Trainer phases with nodes of their own: "warm_start" (supervised steps
// before RL) and "eval" (held-out scoring).
const std::vector<std::string>& trainer_phases();

// True when `a` and `b` describe the same experiment: every field and `raw`
// equal, ignoring where they came from (file, text, lines, overrides, node
// lines). A saved and reloaded experiment is the same_content as the original.
bool same_content(const Experiment& a, const Experiment& b);

enum class Severity { error, warning };

// One problem found in a graph file. `node` is empty for file-level issues.
// Warnings (e.g. layout for a node that does not exist) do not stop a run.
struct GraphIssue {
  std::string file;
  int line = 0;
  std::string node;
  std::string message;  // what is wrong
  std::string hint;     // what to do about it
  Severity severity = Severity::error;
  // The trainer phase ("warm_start", "eval") whose nodes the issue is
  // about; "" for the graph's own nodes and file-level issues. A phase's
  // node may share its id with a node of the graph, so `node` alone does
  // not say which one is meant.
  std::string phase = "";
  // "file:line: node 'x': trainer.<phase>: message (hint: ...)"; warnings
  // say "warning: " after the location; the line is left out when 0, the
  // file when empty, the phase when "".
  std::string to_string() const;
};

// True when any issue is an error (not just a warning).
bool has_errors(const std::vector<GraphIssue>& issues);

class GraphError : public std::runtime_error {
 public:
  explicit GraphError(std::vector<GraphIssue> issues);
  const std::vector<GraphIssue>& issues() const { return issues_; }

 private:
  std::vector<GraphIssue> issues_;
};

// Parses YAML text, applies overrides, fills the structs. Throws GraphError
// with every problem found: YAML syntax errors (with line), malformed or
// unresolvable overrides, duplicate keys and values of the wrong type (with
// line and hint). Overrides, applied in order (Hydra style):
//   key.path=value    replace a key that exists (value parsed as YAML:
//                     5 int, 0.1 float, true bool, [a, b] list, text string)
//   +key.path=value   add a key that does not exist yet (creates maps on the
//                     way; on a list, index == size appends)
//   ++key.path=value  replace, or add when missing
//   ~key.path         remove a key or list item
// Path segments are map keys, 0-based list indices, or on a list of maps
// the `id` of an item ("nodes.gen.out=[responses]").
// A top-level `defaults: [base.yaml, ...]` builds the file on others
// (paths relative to the file; "" file: to the working directory): the
// bases are loaded first, recursively, merged in order, and the file's own
// keys merged over them -- maps key by key, scalars and lists replaced, a
// key set to null removed; a map written over a list of nodes (items with
// an `id`) edits those nodes by id. Overrides apply after the merge. A
// missing or unreadable base, a base that is not a map, and a cycle are
// issues at the `defaults:` entry. docs/graph-file.md has the rules.
// `text` is the input as given when there are no overrides and no
// defaults, and experiment_to_yaml() of the result (resolved, without
// `defaults:`) otherwise.
Experiment load_experiment_text(const std::string& text, const std::string& file,
                                const std::vector<std::string>& overrides = {});
Experiment load_experiment_file(const std::string& path, const std::vector<std::string>& overrides = {});

// Serialises back to YAML (the GUI's save). Keys in the canonical order:
// name, algorithm, seed, pools, models, rewards, task, trainer, nodes,
// layout, then other keys sorted; inside a pool workers, device; a model
// role, pool, parallel {dp, tp, pp}, config; a reward type, config; a node
// id, call, in, out; other maps sorted. Lists of scalars, `parallel` and
// layout entries are flow style (`in: [a, b]`). Struct fields win over `raw`;
// keys only in `raw` are kept. A key is written when the loaded file had it
// or its value differs from the default. Loading the result and saving it
// again gives the same bytes.
std::string experiment_to_yaml(const Experiment& exp);

}  // namespace rlwb::core
