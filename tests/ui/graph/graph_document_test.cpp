// The editor's document: opening, saving byte-for-byte, undo per gesture,
// edits, copy/paste, and files that do not load.
#include "ui/graph/graph_document.h"

#include <gtest/gtest.h>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"
#include "ui/graph/graph_editor.h"
#include "ui/graph/undo_stack.h"
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

TEST_F(GraphDocumentTest, AnEditSavesCanonicalYamlThatReloadsToTheSameGraphAndIsByteStable) {
  std::string p = copy_demo();
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
  // What was saved is canonical: saving it again (even after an edit undone) gives the same bytes.
  std::string saved = read_bytes(p);
  EXPECT_EQ(core::experiment_to_yaml(again.experiment()), saved);
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
