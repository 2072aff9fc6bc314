// Checks of the trainer phases (and of the trainer keys that name columns
// or models), so that a typo in a warm start or an eval
// is found before any worker starts rather than after minutes of training:
// the phases' own nodes get the same call and column checks as the graph's
// (on the task's columns), and the keys that name models or columns must
// name ones that exist.
#include <algorithm>

#include "core/validate/checks.h"
#include "core/graph/names.h"

namespace rlwb::core::graph_detail {
namespace {

using nlohmann::json;

std::vector<std::string> model_names(const Experiment& exp) {
  std::vector<std::string> names;
  for (const auto& [name, _] : exp.models) names.push_back(name);
  return names;
}

// `value` at `path` must be a model name (or, with `list`, a list of them).
void check_models(IssueList& out, const std::string& path, const json& value, bool list) {
  const Experiment& exp = out.exp();
  const auto models = model_names(exp);
  auto check_one = [&](const json& name, const std::string& at) {
    if (!name.is_string()) {
      out.add(out.line(at), "", path + " should name a model, not " + name.dump(),
              "write one of: " + list_names(models));
      return;
    }
    const std::string model = name.get<std::string>();
    if (!exp.models.count(model))
      out.add(out.line(at), "", path + " names model '" + model + "', which the graph does not have",
              "models: " + list_names(models) + "." + did_you_mean(model, models));
  };
  if (!list) return check_one(value, path);
  if (value.is_string()) return check_one(value, path);  // one model for a list is fine
  if (!value.is_array()) {
    out.add(out.line(path), "", path + " should be a list of models, not " + value.dump(),
            "write e.g. [" + (models.empty() ? std::string("actor") : models.front()) + "]");
    return;
  }
  for (std::size_t i = 0; i < value.size(); ++i) check_one(value[i], path + "." + std::to_string(i));
}

}  // namespace

void check_phases(std::vector<GraphIssue>& issues, const Experiment& exp, const MethodCatalog& catalog) {
  for (const auto& [phase, nodes] : exp.phase_nodes) {
    IssueList out(exp, issues, phase);
    check_node_calls(out, catalog);
    check_dataflow(out, catalog);
  }
  IssueList out(exp, issues);
  const json& trainer = exp.trainer;
  if (trainer.contains("warm_start") && trainer["warm_start"].is_object()) {
    const json& ws = trainer["warm_start"];
    if (ws.contains("sync")) {
      const json& sync = ws["sync"];
      if (!sync.is_object()) {
        out.add(out.line("trainer.warm_start.sync"), "", "trainer.warm_start.sync should be a map",
                "write e.g. sync: {from: actor, to: [ref]}");
      } else {
        if (sync.contains("from"))
          check_models(out, "trainer.warm_start.sync.from", sync["from"], false);
        else
          out.add(out.line("trainer.warm_start.sync"), "", "trainer.warm_start.sync has no 'from'",
                  "name the model whose warm-started weights the others load, e.g. from: actor");
        if (sync.contains("to")) check_models(out, "trainer.warm_start.sync.to", sync["to"], true);
      }
    }
  }
  if (trainer.contains("eval") && trainer["eval"].is_object() && exp.phase_nodes.count("eval")) {
    const json& ev = trainer["eval"];
    std::vector<std::string> produced;
    for (const auto& node : exp.phase_nodes.at("eval"))
      produced.insert(produced.end(), node.out.begin(), node.out.end());
    if (!ev.contains("score") || !ev["score"].is_string()) {
      out.add(out.line("trainer.eval"), "", "trainer.eval has no score column",
              "name the eval nodes' output to average as val/score/mean, e.g. score: " +
                  (produced.empty() ? std::string("eval_scores") : produced.back()));
    } else if (std::find(produced.begin(), produced.end(), ev["score"].get<std::string>()) ==
               produced.end()) {
      const std::string score = ev["score"].get<std::string>();
      out.add(out.line("trainer.eval.score"), "",
              "trainer.eval.score names column '" + score + "', which no eval node writes",
              "the eval nodes write: " + list_names(produced) + "." + did_you_mean(score, produced));
    }
  }
  if (trainer.contains("save")) check_models(out, "trainer.save", trainer["save"], true);
  if (trainer.contains("token_masks")) {
    // Columns whose sums count a step's tokens (perf/throughput).
    const json& masks = trainer["token_masks"];
    std::vector<std::string> written;
    for (const auto& node : exp.nodes) written.insert(written.end(), node.out.begin(), node.out.end());
    bool ok = masks.is_array();
    for (const auto& m : ok ? masks : json::array()) ok = ok && m.is_string();
    if (!ok) {
      out.add(out.line("trainer.token_masks"), "", "trainer.token_masks should be a list of column names",
              "write e.g. token_masks: [prompt_mask, response_mask]");
    } else {
      for (std::size_t i = 0; i < masks.size(); ++i) {
        const std::string column = masks[i].get<std::string>();
        if (std::find(written.begin(), written.end(), column) == written.end())
          out.add(out.line("trainer.token_masks." + std::to_string(i)), "",
                  "trainer.token_masks names column '" + column + "', which no node writes",
                  "list mask columns the nodes write." + did_you_mean(column, written));
      }
    }
  }
}

}  // namespace rlwb::core::graph_detail
