// What the inspector's forms write: settings by dotted path (written,
// removed with the maps they leave empty), typed text turned into values,
// and renames of pools, models and rewards that keep the rest of the file
// pointing at them.
#include <gtest/gtest.h>

#include <functional>

#include "core/graph/experiment.h"
#include "tests/ui/ui_test_support.h"
#include "ui/graph/experiment_edits.h"
#include "ui/graph/graph_document.h"
#include "ui/graph/setting_values.h"
#include "ui/graph/settings_form.h"

namespace rlwb::ui {
namespace {

using core::config::setting_shape;
using nlohmann::json;

TEST(SettingValues, WriteFindAndRemoveByPath) {
  json config = {{"seed", 1}};
  set_setting(config, "optim.lr", 0.01);
  ASSERT_NE(find_setting(config, "optim.lr"), nullptr);
  EXPECT_EQ(*find_setting(config, "optim.lr"), 0.01);
  EXPECT_EQ(find_setting(config, "optim.eps"), nullptr);
  EXPECT_EQ(find_setting(config, "seed.x"), nullptr);
  EXPECT_TRUE(remove_setting(config, "optim.lr"));
  EXPECT_EQ(config, json({{"seed", 1}}));  // the empty optim map went too
  EXPECT_FALSE(remove_setting(config, "optim.lr"));
}

TEST(SettingValues, TypedTextBecomesTheValueOfItsTypeOrStaysTextForTheValidator) {
  EXPECT_EQ(setting_value(setting_shape("integer > 0"), " 128 "), json(128));
  EXPECT_TRUE(setting_value(setting_shape("integer > 0"), "128").is_number_integer());
  EXPECT_EQ(setting_value(setting_shape("number > 0"), "2.5e-4"), json(2.5e-4));
  EXPECT_EQ(setting_value(setting_shape("number > 0"), "fast"), json("fast"));  // the validator says why
  EXPECT_EQ(setting_value(setting_shape("integer > 0 or null"), "null"), json(nullptr));
  EXPECT_EQ(setting_value(setting_shape("list of text"), "ref, critic"), json({"ref", "critic"}));
  EXPECT_EQ(setting_value(setting_shape("list of 2 numbers"), "[0.9, 0.95]"), json({0.9, 0.95}));
  EXPECT_EQ(setting_value(setting_shape("text"), "12"), json("12"));
  EXPECT_EQ(setting_value(setting_shape("list of nodes"), R"({"type": "char"})"), json({{"type", "char"}}));
  EXPECT_EQ(setting_value(setting_shape("list of nodes"), "char"), json("char"));
  EXPECT_EQ(setting_text(json({"ref", "critic"})), "ref, critic");
  EXPECT_EQ(setting_text(json(0.00025)), "0.00025");
}

TEST(SettingsFormIssues, AnIssueIsAboutAPathWhenItsMessageStartsWithIt) {
  std::vector<core::GraphIssue> issues = {
      {"f", 3, "", "models.actor.config.optim.lr: 'fast' is not a number", "", core::Severity::error}};
  EXPECT_NE(issue_about(issues, "models.actor.config.optim.lr"), "");
  EXPECT_NE(issue_about(issues, "models.actor.config.optim"), "");
  EXPECT_EQ(issue_about(issues, "models.actor.config.optim.l"), "");
  EXPECT_EQ(issue_about(issues, "models.critic.config.optim.lr"), "");
}

class ExperimentEditsTest : public test::TempDirTest {
 protected:
  core::Experiment ppo() { return core::load_experiment_file(test::source_path("experiments/ppo.yaml")); }
};

TEST_F(ExperimentEditsTest, RenamingAModelRenamesEveryCallAndTheTrainersReferences) {
  core::Experiment exp = ppo();
  ASSERT_EQ(resource_name_problem(exp, "models", "policy", "actor"), "");
  rename_model(exp, "actor", "policy");
  EXPECT_FALSE(exp.models.count("actor"));
  EXPECT_EQ(exp.models.at("policy").name, "policy");
  EXPECT_EQ(exp.nodes[0].call, "policy.generate");
  EXPECT_EQ(exp.nodes[0].target, "policy");
  EXPECT_EQ(exp.trainer["warm_start"]["nodes"][0]["call"], "policy.sft_update");
  EXPECT_EQ(exp.phase_nodes.at("eval")[0].call, "policy.generate");
  EXPECT_EQ(exp.trainer["warm_start"]["sync"]["from"], "policy");
  EXPECT_EQ(exp.trainer["save"], json({"policy"}));
  // What is written reloads with the new name everywhere, and nothing of the old one.
  const std::string yaml = core::experiment_to_yaml(exp);
  EXPECT_EQ(yaml.find("actor."), std::string::npos) << yaml;
  core::Experiment again = core::load_experiment_text(yaml, "");
  EXPECT_TRUE(again.models.count("policy"));
  EXPECT_FALSE(again.models.count("actor"));
}

TEST_F(ExperimentEditsTest, RenamingAPoolMovesItsModelsAlong) {
  core::Experiment exp = ppo();
  rename_pool(exp, "train", "gpus");
  EXPECT_TRUE(exp.pools.count("gpus"));
  for (const auto& [name, model] : exp.models) EXPECT_EQ(model.pool, "gpus") << name;
  core::Experiment again = core::load_experiment_text(core::experiment_to_yaml(exp), "");
  EXPECT_FALSE(again.pools.count("train"));
}

TEST_F(ExperimentEditsTest, NamesThatAreTakenOrCannotBeCalledAreRefused) {
  core::Experiment exp = ppo();
  EXPECT_NE(resource_name_problem(exp, "models", "math"), "");  // a reward's name
  EXPECT_NE(resource_name_problem(exp, "rewards", "critic"), "");
  EXPECT_NE(resource_name_problem(exp, "models", "builtin"), "");
  EXPECT_NE(resource_name_problem(exp, "models", "my.actor"), "");
  EXPECT_NE(resource_name_problem(exp, "models", ""), "");
  EXPECT_EQ(resource_name_problem(exp, "models", "actor", "actor"), "");  // unchanged
  EXPECT_EQ(resource_name_problem(exp, "pools", "critic"), "");           // pools are apart
  EXPECT_EQ(unused_resource_name(exp, "models", "critic"), "critic_2");
}

TEST_F(ExperimentEditsTest, AddedResourcesAreWrittenAndDeletedOnesAreGone) {
  core::Experiment exp = ppo();
  add_pool(exp, "side", 1, "cpu");
  add_model(exp, "rm", "reward_model", "side");
  add_reward(exp, "judge", "math");
  delete_model(exp, "ref");
  core::Experiment again = core::load_experiment_text(core::experiment_to_yaml(exp), "");
  EXPECT_EQ(again.pools.at("side").workers, 1);
  EXPECT_EQ(again.models.at("rm").role, "reward_model");
  EXPECT_EQ(again.models.at("rm").pool, "side");
  EXPECT_EQ(again.rewards.at("judge").type, "math");
  EXPECT_FALSE(again.models.count("ref"));
}

// Each kind of edit the editor makes is one undo step that undo takes back
// whole and redo puts back whole.
TEST_F(ExperimentEditsTest, EveryKindOfEditIsOneUndoStepAndRedoGivesItBack) {
  const std::string file = path("ppo.yaml");
  test::write_bytes(file, test::read_bytes(test::source_path("experiments/ppo.yaml")));
  GraphDocument doc = GraphDocument::open(file);
  ASSERT_TRUE(doc.loaded());
  using Edit = std::function<void(GraphDocument&)>;
  auto gesture = [](std::function<void(core::Experiment&)> change) {
    return [change](GraphDocument& d) {
      d.begin_gesture();
      change(d.experiment());
      d.end_gesture();
    };
  };
  const std::vector<std::pair<std::string, Edit>> edits = {
      {"add node",
       [](GraphDocument& d) {
         d.add_node("builtin.column_means", {10, 10}, {"values"});
       }},
      {"delete node", [](GraphDocument& d) { d.delete_nodes({"ref"}); }},
      {"rename node",
       [](GraphDocument& d) {
         std::string error;
         d.rename_node("adv", "advantage", error);
       }},
      {"move node",
       [](GraphDocument& d) {
         d.begin_gesture();
         d.set_position("gen", {5, 5});
         d.end_gesture();
       }},
      {"auto layout", [](GraphDocument& d) { d.arrange(); }},
      {"setting", gesture([](core::Experiment& e) {
         apply_setting_edit(e.models.at("actor").config, {"optim.lr", json(0.5)});
       })},
      {"setting removed", gesture([](core::Experiment& e) {
         apply_setting_edit(e.models.at("actor").config, {"optim.warmup_steps", std::nullopt});
       })},
      {"task setting", gesture([](core::Experiment& e) {
         apply_setting_edit(e.task, {"batch_size", json(64)});
       })},
      {"trainer setting", gesture([](core::Experiment& e) {
         apply_setting_edit(e.trainer, {"steps", json(7)});
       })},
      {"add pool", gesture([](core::Experiment& e) { add_pool(e, "side", 1, "cpu"); })},
      {"rename pool", gesture([](core::Experiment& e) { rename_pool(e, "train", "gpus"); })},
      {"add model", gesture([](core::Experiment& e) { add_model(e, "rm", "reward_model", "train"); })},
      {"rename model", gesture([](core::Experiment& e) { rename_model(e, "critic", "value"); })},
      {"delete model", gesture([](core::Experiment& e) { delete_model(e, "ref"); })},
      {"add reward", gesture([](core::Experiment& e) { add_reward(e, "judge", "math"); })},
      {"rename reward", gesture([](core::Experiment& e) { rename_reward(e, "math", "checker"); })},
      {"delete reward", gesture([](core::Experiment& e) { delete_reward(e, "math"); })},
  };
  for (const auto& [kind, edit] : edits) {
    // The shipped layout is the auto layout: move a node first so it has something to do.
    const bool moved_first = kind == "auto layout";
    if (moved_first) {
      doc.begin_gesture();
      doc.set_position("gen", {5, 5});
      doc.end_gesture();
    }
    const std::string before = doc.text_to_save();
    const auto positions = doc.positions();
    edit(doc);
    const std::string after = doc.text_to_save();
    ASSERT_NE(after, before) << kind << " changed nothing";
    ASSERT_TRUE(doc.undo()) << kind;
    EXPECT_EQ(doc.text_to_save(), before) << kind << ": undo did not take it back whole";
    EXPECT_EQ(doc.positions(), positions) << kind;
    ASSERT_TRUE(doc.redo()) << kind;
    EXPECT_EQ(doc.text_to_save(), after) << kind << ": redo did not put it back";
    doc.undo();
    if (moved_first) doc.undo();
  }
  EXPECT_FALSE(doc.dirty());  // everything undone: the file as opened
}

}  // namespace
}  // namespace rlwb::ui
