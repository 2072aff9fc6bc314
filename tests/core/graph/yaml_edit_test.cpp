// The minimal-edit save (core/graph/yaml_edit.h): unedited files come back
// byte for byte; each kind of edit, on every experiments/*.yaml, changes
// only its own lines, keeps every comment and reloads to the edited
// experiment; anchors, `defaults:` and styles the patch does not edit.
#include "core/graph/yaml_edit.h"

#include <gtest/gtest.h>

#include <functional>

#include "tests/core/graph/yaml_edit_test_support.h"

namespace rlwb::core {
namespace {

using nlohmann::json;
using testing::expect_minimal_save;
using testing::experiment_files;
using testing::file_text;
using testing::lines_of;

// One edit, as the editor makes it: on the structs (and layout), not `raw`.
struct Edit {
  const char* what;
  std::function<void(Experiment&)> apply;
  std::size_t lines_changed;  // of the original, at most
  // More in a file with `defaults:` that edits the base's nodes by id.
  std::size_t more_in_derived = 0;
};

ModelSpec& main_model(Experiment& exp) {
  return exp.models.count("actor") ? exp.models["actor"] : exp.models.begin()->second;
}

const std::vector<Edit>& edits() {
  static const std::vector<Edit> all = {
      {"change a nested model setting",
       [](Experiment& exp) {
         json& config = main_model(exp).config;
         if (config.contains("optim")) {
           config["optim"]["lr"] = 1.25e-3;
           return;
         }
         for (auto& [key, value] : config.items())
           if (value.is_number()) {
             value = value.get<double>() + 1;
             return;
           }
       },
       1},
      {"add a key", [](Experiment& exp) { exp.task["note"] = "added by a test"; }, 0},
      {"remove a key",
       [](Experiment& exp) {
         for (auto& [key, value] : exp.task.items())
           if (key != "name") {
             exp.task.erase(key);
             return;
           }
       },
       1},
      {"change a pool's workers", [](Experiment& exp) { exp.pools.begin()->second.workers += 1; }, 1},
      {"add a node",
       [](Experiment& exp) {
         NodeSpec node;
         node.id = "added";
         node.call = "builtin.column_means";
         node.target = "builtin";
         node.method = "column_means";
         node.in = {exp.nodes.front().out.empty() ? "prompts" : exp.nodes.front().out.front()};
         exp.nodes.push_back(node);
         exp.layout["added"] = {{"x", 900}, {"y", 700}};
       },
       0},
      {"delete a node",
       [](Experiment& exp) {
         exp.layout.erase(exp.nodes.back().id);
         exp.nodes.pop_back();
       },
       // Its node line and layout line; the only node (sft.yaml): `nodes:`
       // and `layout:` too, written [] and {}.
       4},
      {"rename a node",
       [](Experiment& exp) {
         NodeSpec& node = exp.nodes.front();
         if (exp.layout.contains(node.id)) {
           exp.layout[node.id + "_renamed"] = exp.layout[node.id];
           exp.layout.erase(node.id);
         }
         node.id += "_renamed";
       },
       // Edits by id append a new id, so a file that edits the base's
       // nodes (reinforce_pp.yaml's two) lists them whole instead.
       2, 2},
      {"move a node",
       [](Experiment& exp) {
         const std::string& id = exp.nodes.front().id;
         json at = exp.layout.contains(id) ? exp.layout[id] : json{{"x", 0}, {"y", 0}};
         at["x"] = at["x"].get<int>() + 10;
         exp.layout[id] = at;
       },
       1},
      {"change a flow list",
       [](Experiment& exp) {
         for (auto& node : exp.nodes)
           if (node.in_ports.empty()) {
             node.in.push_back("extra_column");
             return;
           }
       },
       1},
  };
  return all;
}

TEST(YamlEdit, AnUneditedExperimentGivesTheSameBytesForEveryExperimentFile) {
  for (const auto& file : experiment_files()) {
    const std::string text = file_text(file);
    YamlEdit saved = edit_experiment_text(text, file, load_experiment_text(text, file));
    EXPECT_EQ(saved.text, text) << file;
    EXPECT_FALSE(saved.whole_file_canonical) << file;
  }
}

TEST(YamlEdit, EachKindOfEditChangesOnlyItsLinesKeepsCommentsAndReloadsForEveryExperimentFile) {
  for (const auto& file : experiment_files()) {
    const std::string text = file_text(file);
    for (const Edit& edit : edits()) {
      SCOPED_TRACE(file + ": " + edit.what);
      Experiment exp = load_experiment_text(text, file);
      edit.apply(exp);
      YamlEdit saved = edit_experiment_text(text, file, exp);
      EXPECT_FALSE(saved.whole_file_canonical);
      EXPECT_TRUE(saved.rewritten_sections.empty()) << saved.rewritten_sections.front();
      EXPECT_NE(saved.text, text);
      expect_minimal_save(text, saved.text, file, exp,
                          edit.lines_changed + (exp.bases.empty() ? 0 : edit.more_in_derived));
    }
  }
}

TEST(YamlEdit, AllEditsAtOnceStillReloadForEveryExperimentFile) {
  for (const auto& file : experiment_files()) {
    const std::string text = file_text(file);
    Experiment exp = load_experiment_text(text, file);
    std::size_t changed = 0;
    for (const Edit& edit : edits()) edit.apply(exp), changed += edit.lines_changed + edit.more_in_derived;
    YamlEdit saved = edit_experiment_text(text, file, exp);
    EXPECT_FALSE(saved.whole_file_canonical) << file;
    expect_minimal_save(text, saved.text, file, exp, changed);
  }
}

TEST(YamlEdit, AnEditUndoneGivesTheSameBytes) {
  const std::string file = std::string(rlwb::testing::kSourceDir) + "/experiments/grpo.yaml";
  const std::string text = file_text(file);
  Experiment exp = load_experiment_text(text, file);
  exp.trainer["steps"] = 7;
  exp.trainer["steps"] = 500;
  EXPECT_EQ(edit_experiment_text(text, file, exp).text, text);
}

// What saving `text` (as exp.yaml) writes after `edit`.
std::string saved_after(const std::string& text, const std::function<void(Experiment&)>& edit) {
  Experiment exp = load_experiment_text(text, "exp.yaml");
  edit(exp);
  return edit_experiment_text(text, "exp.yaml", exp).text;
}

TEST(YamlEdit, AChangedScalarKeepsTheCommentOnItsLine) {
  const std::string text = "name: x\ntrainer:\n  steps: 3  # three is enough here\n  save: [actor]\n";
  EXPECT_EQ(saved_after(text, [](Experiment& exp) { exp.trainer["steps"] = 40; }),
            "name: x\ntrainer:\n  steps: 40  # three is enough here\n  save: [actor]\n");
}

TEST(YamlEdit, AnAddedKeyGoesAfterItsParentsLastChildCreatingMapsOnTheWay) {
  const std::string text =
      "name: x\ntrainer:\n  steps: 3\n  # about eval\n  eval:\n    every: 5\n# the task\ntask: {name: "
      "arithmetic}\n";
  auto edit = [](Experiment& exp) {
    exp.trainer["eval"]["batch_size"] = 8;
    exp.trainer["algorithm"] = {{"kl_ctrl", {{"type", "fixed"}}}};
  };
  EXPECT_EQ(saved_after(text, edit),
            "name: x\ntrainer:\n  steps: 3\n  # about eval\n  eval:\n    every: 5\n    batch_size: 8\n"
            "  algorithm: {kl_ctrl: {type: fixed}}\n# the task\ntask: {name: arithmetic}\n");
}

TEST(YamlEdit, AChangeInAFlowMapRewritesOnlyThatMapKeepingItsOtherEntriesText) {
  const std::string text =
      "name: x\nmodels:\n  a:\n    config:\n      optim: {lr: 2.5e-4, weight_decay: 0.0}  # tuned\n";
  auto edit = [](Experiment& exp) {
    exp.models["a"].config["optim"]["lr"] = 1e-3;
    exp.models["a"].config["optim"]["warmup_steps"] = 3;
  };
  EXPECT_EQ(saved_after(text, edit),
            "name: x\nmodels:\n  a:\n    config:\n      optim: {lr: 0.001, weight_decay: 0.0, warmup_steps: "
            "3}  # tuned\n");
}

TEST(YamlEdit, BlockStyleNodesKeepTheCommentsBetweenThemAndANewNodeGoesWhereItIsInTheList) {
  const std::string text =
      "name: x\nnodes:\n  # the generator\n  - id: gen\n    call: actor.generate\n    out: [responses]\n\n"
      "  # the scorer\n  - id: score\n    call: math.score\n    in: [responses]\n";
  auto edit = [](Experiment& exp) {
    NodeSpec node;
    node.id = node.call = "mid";
    node.target = "mid";
    node.in = {"a"};
    exp.nodes.insert(exp.nodes.begin() + 1, node);
    exp.nodes[0].out.push_back("mask");
    exp.nodes[2].in = {"responses", "more"};
    exp.nodes[2].in_ports = {"x", "y"};
  };
  EXPECT_EQ(saved_after(text, edit),
            "name: x\nnodes:\n  # the generator\n  - id: gen\n    call: actor.generate\n    out: [responses, "
            "mask]\n"
            "  - {id: mid, call: mid, in: [a]}\n\n  # the scorer\n  - id: score\n    call: math.score\n"
            "    in: {x: responses, y: more}\n");
}

TEST(YamlEdit, AnAliasedValueEditedForOneModelLeavesTheOtherAsItWas) {
  const std::string file = std::string(rlwb::testing::kSourceDir) + "/experiments/grpo.yaml";
  const std::string text = file_text(file);
  for (const char* edited_model : {"actor", "ref"}) {
    SCOPED_TRACE(edited_model);
    Experiment exp = load_experiment_text(text, file);
    exp.models[edited_model].config["model"]["hidden_size"] = 64;
    YamlEdit saved = edit_experiment_text(text, file, exp);
    EXPECT_FALSE(saved.whole_file_canonical);
    EXPECT_EQ(saved.rewritten_sections, std::vector<std::string>{"models"});
    Experiment reloaded = load_experiment_text(saved.text, file);
    for (const char* model : {"actor", "ref"})
      EXPECT_EQ(reloaded.models[model].config["model"]["hidden_size"],
                std::string(model) == edited_model ? 64 : 128)
          << model;
    // Only the models section was written anew: every comment line is there.
    expect_minimal_save(text, saved.text, file, exp, 20);
  }
}

TEST(YamlEdit, ADerivedFileKeepsItsDefaultsAndWritesOnlyWhatDiffersFromItsBase) {
  const std::string file = std::string(rlwb::testing::kSourceDir) + "/experiments/rloo.yaml";
  const std::string text = file_text(file);
  Experiment exp = load_experiment_text(text, file);
  exp.trainer["steps"] = 7;
  main_model(exp).config["optim"]["lr"] = 1e-3;
  exp.nodes.pop_back();  // `update`, the base's
  exp.layout.erase("update");
  YamlEdit saved = edit_experiment_text(text, file, exp);
  EXPECT_FALSE(saved.whole_file_canonical);
  const auto lines = lines_of(saved.text);
  EXPECT_EQ(lines.at(5), "defaults: [grpo.yaml]");
  EXPECT_LE(lines.size(), 20u) << saved.text;
  EXPECT_NE(saved.text.find("update: ~"), std::string::npos) << saved.text;
  expect_minimal_save(text, saved.text, file, exp, 0);
}

TEST(YamlEdit, AnEditInsideAMultiLineFlowMapRewritesItsSectionOnly) {
  const std::string text =
      "name: x\n# keep me\ntrainer:\n  steps: 3\n  algorithm: {adv_estimator: grpo,\n    norm: true}\n"
      "task: {name: arithmetic}  # and me\n";
  Experiment exp = load_experiment_text(text, "exp.yaml");
  exp.trainer["algorithm"]["norm"] = false;
  YamlEdit saved = edit_experiment_text(text, "exp.yaml", exp);
  EXPECT_EQ(saved.rewritten_sections, std::vector<std::string>{"trainer"});
  EXPECT_FALSE(saved.whole_file_canonical);
  expect_minimal_save(text, saved.text, "exp.yaml", exp, 4);
}

}  // namespace
}  // namespace rlwb::core
