// The trainer phases' nodes in the editor's document: named by canvas key
// ("eval/eval_gen"), laid out as blocks of their own below the step's
// graph, edited like the step's nodes (one undo entry each) with every edit
// written into trainer.<phase>.nodes, and their positions saved in layout:
// under keys the validator accepts.
#include "ui/graph/phase_graphs.h"

#include <gtest/gtest.h>

#include "core/validate/validator.h"
#include "tests/ui/ui_test_support.h"
#include "ui/graph/editor_catalog.h"
#include "ui/graph/graph_document.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/phase_groups.h"

namespace rlwb::ui {
namespace {

using test::read_bytes;
using test::write_bytes;

class PhaseGraphsTest : public test::TempDirTest {
 protected:
  // experiments/ppo.yaml (a warm start and an eval phase with nodes), copied.
  std::string copy_ppo() {
    std::string p = path("ppo.yaml");
    write_bytes(p, read_bytes(test::source_path("experiments/ppo.yaml")));
    return p;
  }
  static std::vector<std::string> trainer_ids(const core::Experiment& exp, const std::string& phase) {
    std::vector<std::string> ids;
    for (const auto& node : exp.trainer[phase]["nodes"]) ids.push_back(node["id"]);
    return ids;
  }
  static std::vector<std::string> layout_warnings(const core::Experiment& exp) {
    std::vector<std::string> out;
    for (const auto& issue : core::validate_experiment(exp, catalog_from_calls(exp)))
      if (issue.message.find("layout") != std::string::npos) out.push_back(issue.node + ": " + issue.message);
    return out;
  }
};

TEST(CanvasKey, NamesAPhasesNodeByPhaseAndIdAndAStepNodeByItsId) {
  EXPECT_EQ(canvas_key("eval", "eval_gen"), "eval/eval_gen");
  EXPECT_EQ(canvas_key("", "gen"), "gen");
  EXPECT_EQ(split_canvas_key("eval/eval_gen"), (NodeRef{"eval", "eval_gen"}));
  EXPECT_EQ(split_canvas_key("warm_start/sft"), (NodeRef{"warm_start", "sft"}));
  EXPECT_EQ(split_canvas_key("gen"), (NodeRef{"", "gen"}));
  EXPECT_EQ(split_canvas_key("samples/x"), (NodeRef{"", "samples/x"})) << "samples holds no nodes";
}

TEST_F(PhaseGraphsTest, EveryPhaseIsAGroupAndThePhasesFramesTouchNothingElse) {
  GraphDocument doc = GraphDocument::open(copy_ppo());
  ASSERT_TRUE(doc.loaded());
  for (const char* key : {"warm_start/sft", "eval/eval_gen", "eval/eval_score"})
    EXPECT_TRUE(doc.positions().count(key)) << key;
  const auto groups = phase_groups(doc.experiment(), doc.positions());
  ASSERT_EQ(groups.size(), 4u);  // ppo.yaml sets warm_start, eval, samples and save
  const WorldRect step = *graph_bounds(doc.experiment(), doc.positions(), "");
  for (size_t i = 0; i < groups.size(); ++i) {
    SCOPED_TRACE(groups[i].phase);
    EXPECT_EQ(groups[i].has_nodes, groups[i].phase == "warm_start" || groups[i].phase == "eval");
    EXPECT_FALSE(groups[i].frame.overlaps(step)) << "the step's graph";
    for (size_t j = i + 1; j < groups.size(); ++j) EXPECT_FALSE(groups[i].frame.overlaps(groups[j].frame));
  }
  EXPECT_EQ(groups[2].summary.back(), "score: token_level_scores");  // samples lists its settings
}

TEST_F(PhaseGraphsTest, EditsOfAPhasesNodesChangeTrainerNodesAndEachUndoesAsOne) {
  GraphDocument doc = GraphDocument::open(copy_ppo());
  // Added into the warm start: its id may repeat a step node's ("gen" is taken there, not here).
  const std::string key =
      doc.add_node("actor.generate", {300, 1500}, {"prompts"}, {"responses"}, {}, {}, "warm_start");
  EXPECT_EQ(key, "warm_start/generate");
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft", "generate"}));
  EXPECT_EQ(doc.position(key), (Vec2{300, 1500}));
  std::string error;
  ASSERT_TRUE(doc.rename_node(key, "gen", error)) << error;
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft", "gen"}));
  EXPECT_TRUE(doc.positions().count("warm_start/gen"));
  EXPECT_FALSE(doc.rename_node("warm_start/gen", "sft", error)) << "sft is taken in the warm start";
  // A link inside the phase: sft reads the new node's responses.
  doc.begin_gesture();
  edit_graph(doc.experiment(), "warm_start", [](core::Experiment& graph) {
    ASSERT_TRUE(check_link(graph, "gen", "responses", "sft", -1).ok);
    apply_link(graph, "responses", "sft", -1);
  });
  EXPECT_TRUE(doc.end_gesture());
  EXPECT_EQ(doc.experiment().trainer["warm_start"]["nodes"][0]["in"],
            nlohmann::json({"prompts", "answers", "responses"}));
  const auto links = canvas_links(doc.experiment());
  EXPECT_NE(std::find(links.begin(), links.end(), Link{"warm_start/gen", "responses", "warm_start/sft", 2}),
            links.end());
  doc.delete_nodes({"warm_start/gen"});
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft"}));
  EXPECT_FALSE(doc.positions().count("warm_start/gen"));
  // Each edit was one undo entry: delete, link, rename, add.
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft", "gen"}));
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(doc.experiment().phase_nodes.at("warm_start")[0].in,
            (std::vector<std::string>{"prompts", "answers"}));
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft", "generate"}));
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(trainer_ids(doc.experiment(), "warm_start"), (std::vector<std::string>{"sft"}));
  EXPECT_FALSE(doc.dirty());
  EXPECT_EQ(doc.experiment().nodes.size(), 7u) << "the step's graph is untouched";
}

TEST_F(PhaseGraphsTest, PhasePositionsAreSavedInLayoutUnderPhaseKeysAndReadBack) {
  const std::string file = copy_ppo();
  GraphDocument doc = GraphDocument::open(file);
  doc.begin_gesture();
  doc.set_position("eval/eval_gen", {333, 2222});
  ASSERT_TRUE(doc.end_gesture());
  doc.save();
  const core::Experiment saved = core::load_experiment_file(file);
  EXPECT_EQ(saved.layout["eval/eval_gen"], nlohmann::json({{"x", 333}, {"y", 2222}}));
  EXPECT_TRUE(saved.layout.contains("warm_start/sft"));
  EXPECT_EQ(trainer_ids(saved, "eval"), (std::vector<std::string>{"eval_gen", "eval_score"}));
  EXPECT_EQ(saved.trainer["eval"]["nodes"][0]["args"], nlohmann::json({{"greedy", true}}));
  EXPECT_EQ(layout_warnings(saved), std::vector<std::string>{}) << "phase keys are known";
  EXPECT_EQ(GraphDocument::open(file).position("eval/eval_gen"), (Vec2{333, 2222}));
}

TEST_F(PhaseGraphsTest, ValidatorKnowsAPhasesLayoutKeyOnlyWhenThePhaseHasThatNode) {
  std::string yaml = read_bytes(test::source_path("experiments/ppo.yaml"));
  // ppo.yaml stores eval/eval_gen, warm_start/sft, ...: those are known.
  yaml += "  eval/nope: {x: 1, y: 2}\n  warm_start/eval_gen: {x: 1, y: 2}\n";
  const auto warnings = layout_warnings(core::load_experiment_text(yaml, "ppo.yaml"));
  EXPECT_EQ(warnings,
            (std::vector<std::string>{"eval/nope: has a layout position but no node has this id",
                                      "warm_start/eval_gen: has a layout position but no node has this id"}));
}

// `rlwb run ppo.yaml ~trainer.eval` must not warn about the positions of the
// phase it removed: they are the editor's, kept for when the phase is back.
TEST_F(PhaseGraphsTest, ARemovedPhasesPositionsAreNoWarning) {
  const core::Experiment exp =
      core::load_experiment_file(test::source_path("experiments/ppo.yaml"), {"~trainer.eval"});
  EXPECT_TRUE(layout_warnings(exp).empty());
  std::string yaml = read_bytes(test::source_path("experiments/ppo.yaml"));
  yaml += "  eval/nope: {x: 1, y: 2}\n";
  EXPECT_FALSE(layout_warnings(core::load_experiment_text(yaml, "ppo.yaml")).empty());  // the phase is there
}

TEST_F(PhaseGraphsTest, ValidatorRefusesAStepNodeIdThatReadsAsAPhasesLayoutKey) {
  std::string yaml = read_bytes(test::source_path("experiments/ppo.yaml"));
  const std::string id = "{id: adv,";
  yaml.replace(yaml.find(id), id.size(), "{id: eval/adv,");
  const core::Experiment exp = core::load_experiment_text(yaml, "ppo.yaml");
  bool refused = false;
  for (const auto& issue : core::validate_experiment(exp, catalog_from_calls(exp)))
    refused = refused || (issue.node == "eval/adv" && issue.severity == core::Severity::error &&
                          issue.message.find("starts with 'eval/'") != std::string::npos);
  EXPECT_TRUE(refused);
}

TEST_F(PhaseGraphsTest, CopiedPhaseNodesArePastedBackIntoTheirPhase) {
  GraphDocument doc = GraphDocument::open(copy_ppo());
  const std::string text = copy_nodes(doc, {"eval/eval_gen"});
  const auto keys = paste_nodes(doc, text, {40, 40});
  ASSERT_EQ(keys, (std::vector<std::string>{"eval/eval_gen_2"}));
  EXPECT_EQ(trainer_ids(doc.experiment(), "eval"),
            (std::vector<std::string>{"eval_gen", "eval_score", "eval_gen_2"}));
  EXPECT_EQ(doc.position("eval/eval_gen_2").x, doc.position("eval/eval_gen").x + 40);
  ASSERT_TRUE(doc.undo());
  EXPECT_EQ(trainer_ids(doc.experiment(), "eval"), (std::vector<std::string>{"eval_gen", "eval_score"}));
}

}  // namespace
}  // namespace rlwb::ui
