// The inspector's forms driven as a person would, under xvfb-run: a setting
// typed wrong shows the validator's message under it, typed right is saved,
// and each edit is one undo step; a setting removed goes back to its
// default; a model renamed takes its nodes' calls along; and the PPO
// experiment built from an empty canvas, every pool, model, setting and
// node through the GUI, saves a file that validates and means what
// experiments/ppo.yaml means.
#include <gtest/gtest.h>

#include <sstream>

#include "core/config/setting_types.h"
#include "core/graph/experiment.h"
#include "tests/test_paths.h"
#include "tests/ui/ui_test_support.h"
#include "ui/graph/setting_values.h"

namespace rlwb::ui {
namespace {

using nlohmann::json;
using test::item_rect;
using test::read_bytes;
using test::run_gui;
using test::write_bytes;

class GuiFormsTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    file_ = path("ppo.yaml");
    write_bytes(file_, read_bytes(test::source_path("experiments/ppo.yaml")));
  }
  std::vector<std::string> args(std::vector<std::string> extra = {}) {
    std::vector<std::string> a = {"--db", path("rlwb.db"), "--open", file_, "--cli", "/nonexistent/rlwb"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  std::string file_;
};

// Types `text` into the field at `item` (replacing what it holds) and leaves it.
std::string type_into(const std::string& item, const std::string& text) {
  const std::string typing = text.empty() ? "key backspace" : "text " + text;
  return "click @\"" + item + "\"\nframes 2\nkey ctrl+a\n" + typing + "\nkey enter\nframes 2\n";
}
// Shows only the settings whose path contains `path`.
std::string filter_to(const std::string& path) { return type_into("inspector/filter", path); }

TEST_F(GuiFormsTest, ABadValueShowsTheValidatorsMessageAGoodOneIsSavedAndEachIsOneUndo) {
  const std::string lr = "models.actor.config.optim.lr";
  const std::string script = filter_to(lr) + type_into("setting/" + lr, "fast") + "wait @setting_problem/" +
                             lr + " 20000\nscreenshot bad_value.png\n" +
                             type_into("setting/" + lr, "0.0005") + "click @button/Save\nframes 3\n";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["dirty"], false) << r.state["editor"]["status"];
  core::Experiment saved = core::load_experiment_file(file_);
  EXPECT_EQ(saved.models.at("actor").config["optim"]["lr"], 0.0005);
  EXPECT_EQ(saved.models.at("critic").config["optim"]["lr"], 1.0e-3);  // only the actor's
  // The bad value was marked with the validator's own message (screenshot bad_value.png).
  auto bad = run_gui(
      dir_, args({"--frames", "2"}),
      filter_to(lr) + type_into("setting/" + lr, "fast") + "wait @setting_problem/" + lr + " 20000\n", "bad");
  ASSERT_EQ(bad.exit_code, 0) << bad.log;
  bool found = false;
  for (const auto& issue : bad.state["editor"]["issues"])
    found = found || issue["message"].get<std::string>().rfind(lr + ": 'fast' is not a number", 0) == 0;
  EXPECT_TRUE(found) << bad.state["editor"]["issues"].dump();
  auto problem = item_rect(bad.state, "setting_problem/" + lr), field = item_rect(bad.state, "setting/" + lr);
  ASSERT_EQ(problem.size(), 4u);
  ASSERT_EQ(field.size(), 4u);
  EXPECT_GT(problem[1], field[1]);  // under its field
  // Two edits, two undos: back to the file's value.
  auto undone =
      run_gui(dir_, args({"--frames", "2"}),
              filter_to(lr) + type_into("setting/" + lr, "0.001") + type_into("setting/" + lr, "0.002") +
                  "click @button/Undo\nframes 2\nclick @button/Save\nframes 2\n",
              "undo");
  ASSERT_EQ(undone.exit_code, 0) << undone.log;
  EXPECT_EQ(core::load_experiment_file(file_).models.at("actor").config["optim"]["lr"], 0.001);
}

TEST_F(GuiFormsTest, TheXBesideASettingRemovesItBackToTheDefault) {
  const std::string steps = "models.actor.config.optim.warmup_steps";
  auto r = run_gui(
      dir_, args(),
      filter_to(steps) + "click @setting_reset/" + steps + "\nframes 2\nclick @button/Save\nframes 2\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  core::Experiment saved = core::load_experiment_file(file_);
  EXPECT_FALSE(saved.models.at("actor").config["optim"].contains("warmup_steps"));
  EXPECT_EQ(saved.models.at("actor").config["optim"]["total_steps"], 600);
}

TEST_F(GuiFormsTest, RenamingAModelRenamesItsNodesCallsAndAddingAPoolOffersIt) {
  const std::string script = "click @section/Models\nframes 2\nclick @tree/models/critic\nframes 2\n" +
                             type_into("field/models/critic/name", "value_model") +
                             "click @section/Pools\nframes 2\nclick \"@button/+ pool\"\nframes 3\n"
                             "screenshot renamed.png\nclick @button/Save\nframes 2\n";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  core::Experiment saved = core::load_experiment_file(file_);
  EXPECT_TRUE(saved.models.count("value_model"));
  EXPECT_FALSE(saved.models.count("critic"));
  for (const auto& node : saved.nodes)
    if (node.id == "values" || node.id == "critic_update") EXPECT_EQ(node.target, "value_model") << node.id;
  EXPECT_EQ(saved.trainer["warm_start"]["sync"]["to"], json({"ref", "value_model"}));
  EXPECT_EQ(saved.pools.at("pool").workers, 1);
}

// A pool's threads per worker, typed into the pool's form (between workers
// and device): 0 puts the validator's message in the Problems panel, 2 is
// saved to the file.
TEST_F(GuiFormsTest, APoolsThreadsAreEditedInItsFormAndCheckedThere) {
  const std::string open = "click @section/Pools\nframes 2\nclick @tree/pools/train\nframes 2\n";
  auto bad = run_gui(
      dir_, args({"--frames", "2"}),
      open + type_into("field/pools/train/threads", "0") + "wait @problem/0 20000\nscreenshot threads.png\n",
      "bad");
  ASSERT_EQ(bad.exit_code, 0) << bad.log;
  bool found = false;
  for (const auto& issue : bad.state["editor"]["issues"])
    found = found || issue["message"] == "pool 'train' has 0 threads per worker";
  EXPECT_TRUE(found) << bad.state["editor"]["issues"].dump();
  const auto threads = item_rect(bad.state, "field/pools/train/threads"),
             workers = item_rect(bad.state, "field/pools/train/workers");
  ASSERT_EQ(threads.size(), 4u);
  ASSERT_EQ(workers.size(), 4u);
  EXPECT_GT(threads[1], workers[1]);  // under workers
  EXPECT_EQ(item_rect(bad.state, "problem/0").size(), 4u);
  auto r = run_gui(dir_, args(),
                   open + type_into("field/pools/train/threads", "2") + "click @button/Save\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["dirty"], false) << r.state["editor"]["status"];
  EXPECT_EQ(core::load_experiment_file(file_).pools.at("train").threads, 2);
}

TEST_F(GuiFormsTest, ClickingATrainerPhaseShowsItsOwnSettings) {
  const std::string every = "trainer.eval.every";
  auto r = run_gui(dir_, args({"--frames", "2"}),
                   "key f\nframes 3\nclick @group/eval\nframes 2\n" + type_into("setting/" + every, "25") +
                       "screenshot phase.png\nclick @button/Save\nframes 2\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["inspected_phase"], "eval");
  // Only the phase's settings are shown: none of the warm start's.
  EXPECT_TRUE(item_rect(r.state, "setting/trainer.warm_start.steps").empty());
  EXPECT_EQ(item_rect(r.state, "setting/trainer.eval.batch_size").size(), 4u);
  EXPECT_EQ(core::load_experiment_file(file_).trainer["eval"]["every"], 25);
}

TEST_F(GuiFormsTest, AGraphBuiltOnAnotherMarksTheSettingsItInherits) {
  for (const char* name : {"grpo.yaml", "rloo.yaml"})
    write_bytes(path(name), read_bytes(test::source_path(std::string("experiments/") + name)));
  file_ = path("rloo.yaml");
  auto r = run_gui(dir_, args({"--frames", "2"}), filter_to("trainer.") + "frames 2\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  // trainer.steps comes from grpo.yaml; rloo.yaml sets the estimator itself.
  EXPECT_EQ(item_rect(r.state, "setting_inherited/trainer.steps").size(), 4u);
  EXPECT_EQ(item_rect(r.state, "setting/trainer.algorithm.adv_estimator").size(), 4u);
  EXPECT_TRUE(item_rect(r.state, "setting_inherited/trainer.algorithm.adv_estimator").empty());
  // Set here to another value, it is the file's own.
  auto set = run_gui(dir_, args({"--frames", "2"}),
                     filter_to("trainer.") + type_into("setting/trainer.steps", "7"), "set");
  ASSERT_EQ(set.exit_code, 0) << set.log;
  EXPECT_EQ(item_rect(set.state, "setting/trainer.steps").size(), 4u);
  EXPECT_TRUE(item_rect(set.state, "setting_inherited/trainer.steps").empty());
}

// ---- PPO from an empty canvas -------------------------------------------

// Every written leaf of `value` below `prefix`, as (path, value); lists are leaves.
void leaves(const json& value, const std::string& prefix, std::vector<std::pair<std::string, json>>& out) {
  if (!value.is_object()) return out.push_back({prefix, value});
  for (auto& [key, child] : value.items()) leaves(child, prefix + "." + key, out);
}

// The script that writes each leaf through the form: a choice picked from
// its list, a flag clicked when it differs from the default, text typed.
std::string set_settings(const json& section, const std::string& prefix, const core::config::SettingsDoc& doc,
                         const std::set<std::string>& skip = {}) {
  std::vector<std::pair<std::string, json>> written;
  leaves(section, prefix, written);
  std::string script;
  for (const auto& [path, value] : written) {
    if (skip.count(path)) continue;
    const core::config::SettingDoc* setting = nullptr;
    for (const auto& s : doc.settings)
      if (s.path == path) setting = &s;
    if (!setting) ADD_FAILURE() << path << " is not a documented setting";
    if (!setting) continue;
    const auto shape = core::config::setting_shape(setting->type);
    script += filter_to(path);
    if (shape.kind == core::config::SettingKind::kFlag) {
      if (value.dump() != setting->default_value) script += "click @setting/" + path + "\nframes 2\n";
    } else if (shape.kind == core::config::SettingKind::kChoice || path == "task.name") {
      script += "click @setting/" + path + "\nframes 2\nclick @choice/" + path + "/" +
                value.get<std::string>() + "\nframes 2\n";
    } else {
      script += type_into("setting/" + path, setting_text(value));
    }
  }
  return script + type_into("inspector/filter", "");
}

std::string join(const std::vector<std::string>& columns, const std::vector<std::string>& ports) {
  std::string text;
  for (size_t i = 0; i < columns.size(); ++i) {
    std::string item = i < ports.size() && ports[i] != columns[i] ? ports[i] + ": " + columns[i] : columns[i];
    text += (i ? ", " : "") + item;
  }
  return text;
}

// A node added from the palette and given its id, columns and args in the
// node inspector; Escape goes back to the experiment.
std::string add_node(const core::NodeSpec& node) {
  std::string s = type_into("palette/filter", node.call) + "wait @palette/" + node.call +
                  " 20000\nclick @palette/" + node.call + "\nframes 2\n" +
                  type_into("inspector/id", node.id) +
                  type_into("inspector/in", join(node.in, node.in_ports)) +
                  type_into("inspector/out", join(node.out, node.out_ports));
  if (!node.args.empty()) s += type_into("inspector/args", node.args.dump());
  return s + "key escape\nframes 2\n";
}

// The experiment with what the editor is free to choose (positions,
// where keys came from) taken out.
core::Experiment meaning(core::Experiment exp) {
  exp.layout = json::object();
  exp.raw = json::object();
  for (auto& node : exp.nodes) node.line = 0;
  for (auto& [phase, nodes] : exp.phase_nodes)
    for (auto& node : nodes) node.line = 0;
  return exp;
}

TEST_F(GuiFormsTest, ThePpoExperimentBuiltFromAnEmptyCanvasMeansWhatPpoYamlMeans) {
  const core::Experiment ppo = core::load_experiment_file(test::source_path("experiments/ppo.yaml"));
  std::string s = "click @button/New...\nframes 2\nclick \"@template/(empty)\"\nframes 3\n";
  s += type_into("field/name", ppo.name) + type_into("field/algorithm", ppo.algorithm);
  s += "click @section/Pools\nframes 2\n";
  for (const auto& [name, pool] : ppo.pools) {
    s += "click \"@button/+ pool\"\nframes 3\n" + type_into("field/pools/pool/name", name);
    s += type_into("field/pools/" + name + "/workers", std::to_string(pool.workers));
    s += "click @tree/pools/" + name + "\nframes 2\n";  // close it again
  }
  s += "click @section/Pools\nframes 2\nclick @section/Models\nframes 2\n";
  for (const auto& [name, model] : ppo.models) {
    s += "click \"@button/+ model\"\nframes 3\n" + type_into("field/models/model/name", name);
    s += "click @field/models/" + name + "/role\nframes 2\nclick @choice/models/" + name + "/role/" +
         model.role + "\nframes 2\n";
    s += "click @field/models/" + name + "/pool\nframes 2\nclick @choice/models/" + name + "/pool/" +
         model.pool + "\nframes 2\n";
    s += type_into("field/models/" + name + "/dp", std::to_string(model.parallel.dp));
    s += "click @tree/models/" + name + "\nframes 2\n";
    const std::string prefix = "models." + name + ".config";
    s += set_settings(model.config, prefix, core::config::model_settings(model.role, prefix));
  }
  s += "click @section/Models\nframes 2\nclick @section/Rewards\nframes 2\n";
  for (const auto& [name, reward] : ppo.rewards) {
    s += "click \"@button/+ reward\"\nframes 3\n" + type_into("field/rewards/reward/name", name);
    s += "click @field/rewards/" + name + "/type\nframes 2\nclick @choice/rewards/" + name + "/type/" +
         reward.type + "\nframes 2\n";
  }
  s += "click @section/Rewards\nframes 2\n";
  s += set_settings(ppo.task, "task", core::config::task_settings());
  std::set<std::string> phase_nodes;
  for (const auto& phase : core::trainer_phases()) phase_nodes.insert("trainer." + phase + ".nodes");
  s += set_settings(ppo.trainer, "trainer", core::config::trainer_settings(), phase_nodes);
  for (const auto& node : ppo.nodes) s += add_node(node);
  // A phase the trainer sets shows on the canvas; clicking it makes the
  // palette add into it.
  for (const auto& [phase, nodes] : ppo.phase_nodes)
    for (const auto& node : nodes)
      s += "key f\nframes 3\nclick @group/" + phase + "\nframes 2\n" + add_node(node);
  s += "click @button/Auto-layout\nframes 3\nscreenshot built.png\nclick @button/Save\nframes 3\n";

  auto r = run_gui(dir_, args({"--frames", "2"}), s, "built");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string built_path = path("untitled-new.yaml");
  ASSERT_TRUE(std::filesystem::exists(built_path)) << r.state["editor"]["status"];
  EXPECT_EQ(r.state["editor"]["dirty"], false) << r.state["editor"]["status"];
  core::Experiment built = core::load_experiment_file(built_path);
  // It validates (no errors from the editor's validator, which is rlwb validate's).
  for (const auto& issue : r.state["editor"]["issues"]) EXPECT_NE(issue["severity"], "error") << issue.dump();
  core::Experiment expected = meaning(ppo), got = meaning(built);
  EXPECT_EQ(got.pools, expected.pools);
  EXPECT_EQ(got.models, expected.models);
  EXPECT_EQ(got.rewards, expected.rewards);
  EXPECT_EQ(got.task, expected.task);
  EXPECT_EQ(got.trainer, expected.trainer);
  EXPECT_EQ(got.nodes, expected.nodes);
  EXPECT_EQ(got.phase_nodes, expected.phase_nodes);
  EXPECT_EQ(got.name, expected.name);
  EXPECT_EQ(got.algorithm, expected.algorithm);
}

}  // namespace
}  // namespace rlwb::ui
