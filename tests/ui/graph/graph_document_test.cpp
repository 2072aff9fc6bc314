// The editor's document: opening, saving byte-for-byte, undo per gesture,
// edits, copy/paste, and files that do not load.
#include "ui/graph/graph_document.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/undo_stack.h"
#include "tests/core/graph/yaml_edit_test_support.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

using test::read_bytes;
using test::write_bytes;

class GraphDocumentTest : public test::TempDirTest {
 protected:
  std::string copy_demo() {
    std::string p = path("demo.yaml");
    write_bytes(p, read_bytes(test::source_path("experiments/demo.yaml")));
    return p;
  }
  // Every experiments/*.yaml copied here (so that `defaults:` finds its
  // bases): the copies' paths.
  std::vector<std::string> copy_experiments() {
    std::vector<std::string> copies;
    for (const auto& file : core::testing::experiment_files()) {
      copies.push_back(path(std::filesystem::path(file).filename().string()));
      write_bytes(copies.back(), read_bytes(file));
    }
    return copies;
  }
};

TEST(UndoStack, UndoAndRedoWalkTheStatesAndANewPushDropsRedo) {
  UndoStack<int> stack;
  int state = 1;
  stack.push(state), state = 2;
  stack.push(state), state = 3;
  EXPECT_TRUE(stack.undo(state));
  EXPECT_EQ(state, 2);
  EXPECT_TRUE(stack.undo(state));
  EXPECT_EQ(state, 1);
  EXPECT_FALSE(stack.undo(state));
  EXPECT_TRUE(stack.redo(state));
  EXPECT_EQ(state, 2);
  stack.push(state), state = 9;
  EXPECT_FALSE(stack.can_redo());
  EXPECT_TRUE(stack.undo(state));
  EXPECT_EQ(state, 2);
}

TEST(UndoStack, KeepsAtMostItsLimit) {
  UndoStack<int> stack(3);
  int state = 0;
  for (int i = 0; i < 10; ++i) stack.push(state), ++state;
  EXPECT_EQ(stack.undo_size(), 3u);
}

TEST_F(GraphDocumentTest, SavingAnUneditedFileWritesTheSameBytes) {
  std::string p = copy_demo();
  std::string before = read_bytes(p);
  GraphDocument doc = GraphDocument::open(p);
  ASSERT_TRUE(doc.loaded());
  EXPECT_FALSE(doc.dirty());
  doc.save();
  EXPECT_EQ(read_bytes(p), before);  // comments and all
}

TEST_F(GraphDocumentTest, AnEditSavesTheOpenedTextWithTheChangeThatReloadsToTheSameGraphAndIsByteStable) {
  std::string p = copy_demo();
  const std::string before = read_bytes(p);
  GraphDocument doc = GraphDocument::open(p);
  std::string id = doc.add_node("builtin.column_means", {900, 300}, {"x_sq"});
  EXPECT_EQ(id, "column_means");
  EXPECT_TRUE(doc.dirty());
  doc.save();
  EXPECT_FALSE(doc.dirty());
  GraphDocument again = GraphDocument::open(p);
  ASSERT_TRUE(again.loaded());
  ASSERT_EQ(again.experiment().nodes.size(), 6u);
  EXPECT_EQ(again.experiment().nodes.back().call, "builtin.column_means");
  EXPECT_EQ(again.experiment().nodes.back().in, std::vector<std::string>{"x_sq"});
  EXPECT_EQ(again.position(id), (Vec2{900, 300}));
  EXPECT_EQ(again.position("square"), (Vec2{60, 40}));
  // The rest of the file is as written, comments and all: the node and its
  // position are two lines more.
  std::string saved = read_bytes(p);
  core::testing::expect_lines_kept(before, saved, p, 0);
  EXPECT_EQ(core::testing::lines_of(saved).size(), core::testing::lines_of(before).size() + 2);
  again.save();
  EXPECT_EQ(read_bytes(p), saved);
}

TEST_F(GraphDocumentTest, OneUndoEntryPerGestureAndUndoingToTheSavedStateIsClean) {
  GraphDocument doc = GraphDocument::open(copy_demo());
  doc.begin_gesture();
  for (int i = 0; i < 10; ++i) doc.set_position("square", {60.0f + i, 40});  // a drag: many frames
  EXPECT_TRUE(doc.end_gesture());
  doc.begin_gesture();
  EXPECT_FALSE(doc.end_gesture());  // nothing changed: no entry
  EXPECT_TRUE(doc.dirty());
  EXPECT_TRUE(doc.undo());
  EXPECT_EQ(doc.position("square"), (Vec2{60, 40}));
  EXPECT_FALSE(doc.dirty());
  EXPECT_FALSE(doc.undo());
  EXPECT_TRUE(doc.redo());
  EXPECT_EQ(doc.position("square"), (Vec2{69, 40}));
}

TEST_F(GraphDocumentTest, DeleteAndRenameAreUndoable) {
  GraphDocument doc = GraphDocument::open(copy_demo());
  doc.delete_nodes({"negate", "total"});
  EXPECT_EQ(doc.experiment().nodes.size(), 3u);
  EXPECT_TRUE(doc.undo());
  EXPECT_EQ(doc.experiment().nodes.size(), 5u);
  std::string error;
  EXPECT_FALSE(doc.rename_node("square", "negate", error));
  EXPECT_NE(error.find("already"), std::string::npos);
  EXPECT_TRUE(doc.rename_node("square", "sq", error));
  EXPECT_EQ(doc.experiment().nodes[0].id, "sq");
  EXPECT_EQ(doc.position("sq"), (Vec2{60, 40}));
  doc.undo();
  EXPECT_EQ(doc.experiment().nodes[0].id, "square");
}

TEST_F(GraphDocumentTest, AFileThatDoesNotParseOpensWithItsErrorsAndIsNeverOverwritten) {
  std::string p = path("broken.yaml");
  const std::string text = "name: broken\nnodes:\n  - {id: a, call: x.y, in: [a\n";
  write_bytes(p, text);
  GraphDocument doc = GraphDocument::open(p);
  EXPECT_FALSE(doc.loaded());
  ASSERT_FALSE(doc.load_issues().empty());
  EXPECT_GT(doc.load_issues()[0].line, 0);
  EXPECT_THROW(doc.save(), std::runtime_error);
  EXPECT_EQ(read_bytes(p), text);
}

TEST_F(GraphDocumentTest, AFileWithoutLayoutOpensLaidOutLeftToRight) {
  std::string p = path("nolayout.yaml");
  write_bytes(p,
              "name: t\nnodes:\n  - {id: a, call: m.f, in: [x], out: [y]}\n  - {id: b, call: m.g, "
              "in: [y], out: [z]}\n");
  GraphDocument doc = GraphDocument::open(p);
  ASSERT_TRUE(doc.loaded());
  EXPECT_LT(doc.position("a").x, doc.position("b").x);
  EXPECT_FALSE(doc.dirty()) << "the layout at open is not an edit";
  // Unedited: the file stays as written (no layout added behind the user's back).
  doc.save();
  EXPECT_EQ(read_bytes(p).find("layout"), std::string::npos);
}

TEST_F(GraphDocumentTest, CopyPasteGivesFreshIdsAndRenamesWrittenColumns) {
  GraphDocument doc = GraphDocument::open(copy_demo());
  std::string text = copy_nodes(doc, {"square", "total"});
  auto ids = paste_nodes(doc, text, {40, 40});
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], "square_2");
  EXPECT_EQ(ids[1], "total_2");
  const auto& nodes = doc.experiment().nodes;
  const auto& sq2 = nodes[nodes.size() - 2];
  const auto& total2 = nodes.back();
  EXPECT_EQ(sq2.out, std::vector<std::string>{"x_sq_2"});               // x_sq has a writer already
  EXPECT_EQ(total2.in, (std::vector<std::string>{"x_sq_2", "x_neg"}));  // follows the pasted writer
  EXPECT_EQ(sq2.out_port(0), "x_sq");                                   // on the same ports
  EXPECT_EQ(total2.in_port(0), "x_sq");
  EXPECT_EQ(doc.position("square_2"), (Vec2{100, 80}));
  EXPECT_TRUE(doc.undo());  // one gesture
  EXPECT_EQ(doc.experiment().nodes.size(), 5u);
  EXPECT_TRUE(paste_nodes(doc, "not nodes", {0, 0}).empty());
}

// What `doc` would save reloads to its graph and positions, keeps every
// comment line of `original`, and all its other lines but `changed`.
void expect_saved_as_edited(const GraphDocument& doc, const std::string& original, std::size_t changed) {
  const std::string saved = doc.text_to_save();
  GraphDocument again = GraphDocument::from_text(saved, doc.path());
  ASSERT_TRUE(again.loaded()) << saved;
  EXPECT_EQ(again.positions(), doc.positions());
  core::Experiment edited = doc.experiment();
  edited.layout = again.experiment().layout;
  EXPECT_EQ(core::experiment_to_yaml(again.experiment()), core::experiment_to_yaml(edited));
  core::testing::expect_lines_kept(original, saved, doc.path(), changed);
}

TEST_F(GraphDocumentTest, EveryExperimentFileSavesByteIdenticalWithoutEdits) {
  for (const auto& p : copy_experiments()) {
    const std::string before = read_bytes(p);
    GraphDocument doc = GraphDocument::open(p);
    ASSERT_TRUE(doc.loaded()) << p;
    doc.save();
    EXPECT_EQ(read_bytes(p), before) << p;
  }
}

TEST_F(GraphDocumentTest, EveryExperimentFileSavesEachKindOfEditKeepingCommentsAndUntouchedLines) {
  struct Gesture {
    const char* what;
    std::function<void(GraphDocument&)> apply;
    std::size_t lines_changed;
  };
  auto in_gesture = [](GraphDocument& doc, const std::function<void(core::Experiment&)>& edit) {
    doc.begin_gesture();
    edit(doc.experiment());
    doc.end_gesture();
  };
  const std::vector<Gesture> gestures = {
      {"change a model setting",
       [&](GraphDocument& doc) {
         in_gesture(doc, [](core::Experiment& exp) {
           auto& config =
               (exp.models.count("actor") ? exp.models["actor"] : exp.models.begin()->second).config;
           if (config.contains("optim"))
             config["optim"]["lr"] = 5e-4;
           else
             config["added_setting"] = 1;
         });
       },
       1},
      {"add a trainer key",
       [&](GraphDocument& doc) { in_gesture(doc, [](core::Experiment& exp) { exp.trainer["note"] = "x"; }); },
       0},
      {"remove a task key",
       [&](GraphDocument& doc) {
         in_gesture(doc, [](core::Experiment& exp) {
           for (auto& [key, _] : exp.task.items())
             if (key != "name") return void(exp.task.erase(key));
         });
       },
       1},
      {"change a pool's workers",
       [&](GraphDocument& doc) {
         in_gesture(doc, [](core::Experiment& exp) { exp.pools.begin()->second.workers = 3; });
       },
       1},
      {"add a node",
       [](GraphDocument& doc) {
         doc.add_node("builtin.column_means", {900, 700}, {"prompts"});
       },
       0},
      // Its line and its layout line; the only node: `nodes:`/`layout:` too.
      {"delete a node", [](GraphDocument& doc) { doc.delete_nodes({doc.experiment().nodes.back().id}); }, 4},
      // A derived file that edits the base's nodes by id lists them whole.
      {"rename a node",
       [](GraphDocument& doc) {
         std::string error;
         const std::string id = doc.experiment().nodes.front().id;
         doc.rename_node(id, id + "_2", error);
       },
       4},
      {"move a node",
       [](GraphDocument& doc) {
         const std::string id = doc.experiment().nodes.front().id;
         doc.begin_gesture();
         Vec2 at = doc.position(id);
         doc.set_position(id, {at.x + 15, at.y});
         doc.end_gesture();
       },
       1},
      {"change a node's flow list",
       [&](GraphDocument& doc) {
         in_gesture(doc, [](core::Experiment& exp) {
           for (auto& node : exp.nodes)
             if (node.in_ports.empty()) return void(node.in.push_back("extra"));
         });
       },
       1},
  };
  for (const auto& p : copy_experiments()) {
    const std::string before = read_bytes(p);
    for (const Gesture& gesture : gestures) {
      SCOPED_TRACE(p + ": " + gesture.what);
      GraphDocument doc = GraphDocument::open(p);
      gesture.apply(doc);
      ASSERT_TRUE(doc.dirty());
      expect_saved_as_edited(doc, before, gesture.lines_changed);
    }
  }
}

TEST_F(GraphDocumentTest, EveryExperimentFileSavesByteIdenticalAfterAnEditUndone) {
  for (const auto& p : copy_experiments()) {
    const std::string before = read_bytes(p);
    GraphDocument doc = GraphDocument::open(p);
    doc.add_node("builtin.column_means", {900, 700}, {"prompts"});
    doc.begin_gesture();
    doc.experiment().trainer["steps"] = 2;
    doc.end_gesture();
    doc.undo();
    doc.undo();
    doc.save();
    EXPECT_EQ(read_bytes(p), before) << p;
  }
}

TEST_F(GraphDocumentTest, ADerivedFileKeepsItsDefaultsAndStaysShortAfterEdits) {
  copy_experiments();
  const std::string p = path("rloo.yaml");
  const std::string before = read_bytes(p);
  GraphDocument doc = GraphDocument::open(p);
  doc.begin_gesture();
  doc.experiment().trainer["steps"] = 20;
  doc.set_position("gen", {300, 300});
  doc.end_gesture();
  doc.save();
  const std::string saved = read_bytes(p);
  const auto lines = core::testing::lines_of(saved);
  EXPECT_EQ(lines.at(5), "defaults: [grpo.yaml]");
  EXPECT_LE(lines.size(), 16u) << saved;
  core::testing::expect_lines_kept(before, saved, p, 0);
  GraphDocument again = GraphDocument::open(p);
  EXPECT_EQ(again.experiment().trainer["steps"], 20);
  EXPECT_EQ(again.position("gen"), (Vec2{300, 300}));
  EXPECT_EQ(again.experiment().nodes.size(), 5u);
}

TEST_F(GraphDocumentTest, ADerivedFileSavedIntoAnotherFolderIsWrittenResolved) {
  copy_experiments();
  GraphDocument doc = GraphDocument::open(path("rloo.yaml"));
  doc.begin_gesture();
  doc.experiment().trainer["steps"] = 20;
  doc.end_gesture();
  std::filesystem::create_directories(path("elsewhere"));
  const std::string p = path("elsewhere/rloo.yaml");
  doc.save_as(p);
  EXPECT_EQ(read_bytes(p).find("defaults:"), std::string::npos);  // grpo.yaml is not there
  core::Experiment saved = core::load_experiment_file(p);
  EXPECT_EQ(saved.trainer["steps"], 20);
  EXPECT_EQ(saved.nodes.size(), 5u);
}

TEST(PaletteEntries, FromTheCatalogWhenThereIsOneElseFromTheFile) {
  core::Experiment exp =
      core::load_experiment_text(test::read_bytes(test::source_path("experiments/demo.yaml")), "demo.yaml");
  auto entries = palette_entries(exp, nullptr);
  auto has = [&](const std::string& call) {
    return std::any_of(entries.begin(), entries.end(), [&](const PaletteEntry& e) { return e.call == call; });
  };
  EXPECT_TRUE(has("squarer.square"));
  EXPECT_TRUE(has("negator.negate"));  // same role: the methods the file calls on it
  EXPECT_TRUE(has("builtin.add"));
  core::MethodCatalog catalog = catalog_from_json(
      R"({"role_methods": {"demo": ["square", "negate", "echo"]}, "builtins": ["add", "grpo_advantage"]})");
  entries = palette_entries(exp, &catalog);
  EXPECT_TRUE(has("squarer.echo"));
  EXPECT_TRUE(has("builtin.grpo_advantage"));
  EXPECT_FALSE(has("builtin.column_means"));  // the catalog is the truth when given
}

}  // namespace
}  // namespace rlwb::ui
