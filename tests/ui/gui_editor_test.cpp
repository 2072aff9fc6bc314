// The graph editor driven as a person would, under xvfb-run: open a graph,
// add a node from the palette, link pins by dragging, save, reload; move and
// undo; problems the validator finds and their fixes; a file that does not
// load. Checks the files written, the state the program reports and what
// its screenshots show.
#include <gtest/gtest.h>

#include <algorithm>

#include "core/graph/experiment.h"
#include "tests/ui/ui_test_support.h"
#include "tests/test_paths.h"

namespace rlwb::ui {
namespace {

using test::count_color;
using test::distinct_colors;
using test::item_rect;
using test::read_bytes;
using test::run_gui;
using test::write_bytes;

class GuiEditorTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    file_ = path("demo.yaml");
    write_bytes(file_, read_bytes(test::source_path("experiments/demo.yaml")));
  }
  std::vector<std::string> args(std::vector<std::string> extra = {}) {
    // The editor validates in its own process: no rlwb program is needed,
    // so none is given (nothing is at this path).
    std::vector<std::string> a = {"--db", path("rlwb.db"), "--open", file_, "--cli", "/nonexistent/rlwb"};
    a.insert(a.end(), extra.begin(), extra.end());
    return a;
  }
  // --catalog with demo.yaml's role, builtins and task, as a user passes it.
  std::vector<std::string> catalog_args(std::vector<std::string> extra = {}) {
    write_bytes(path("catalog.json"),
                R"({"role_methods": {"demo": ["square", "negate", "global_sum"]},
                    "builtins": ["add", "column_means"],
                    "task_columns": {"toy_numbers": ["x", "prompts"]}})");
    extra.insert(extra.begin(), {"--catalog", path("catalog.json")});
    return args(extra);
  }
  // demo.yaml on disk with node 'global' calling a method its role lacks;
  // returns the line of that call.
  int write_demo_with_a_bad_call() {
    std::string yaml = read_bytes(file_);
    const std::string call = "squarer.global_sum";
    const size_t at = yaml.find(call);
    EXPECT_NE(at, std::string::npos);
    yaml.replace(at, call.size(), "squarer.global_summ");
    write_bytes(file_, yaml);
    return 1 + static_cast<int>(std::count(yaml.begin(), yaml.begin() + at, '\n'));
  }
  std::string file_;
};

TEST_F(GuiEditorTest, OpensTheGraphAndDrawsItsNodesAndLinks) {
  auto r = run_gui(dir_, args({"--frames", "4"}));
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["screen"], "editor");
  ASSERT_EQ(r.state["editor"]["nodes"].size(), 5u);
  EXPECT_TRUE(r.state["editor"]["loaded"]);
  // Every node and pin was drawn inside the canvas.
  auto canvas = item_rect(r.state, "canvas");
  ASSERT_EQ(canvas.size(), 4u);
  for (const char* id :
       {"node/square", "node/metrics", "pin/square/out/x_sq", "pin/total/in/x_neg", "node/[task]"}) {
    auto rect = item_rect(r.state, id);
    ASSERT_EQ(rect.size(), 4u) << id << " not drawn";
    EXPECT_GE(rect[0], canvas[0]) << id;
    EXPECT_LE(rect[2], canvas[2]) << id;
  }
  // The screenshot shows them: node bodies, pool-coloured headers, text.
  const Image& img = r.screenshot;
  ASSERT_EQ(img.width, 1600);
  EXPECT_GT(distinct_colors(img, canvas[0], canvas[1], canvas[2], canvas[3]), 20u);
  auto node = item_rect(r.state, "node/square");
  EXPECT_GT(count_color(img, node[0], node[1], node[2], node[3], 0x285A96, 12),
            200)  // pool 'left' header blue
      << "no header colour where node 'square' is";
}

TEST_F(GuiEditorTest, AddANodeLinkTwoPinsSaveAndReload) {
  // The palette lists every method of this build's catalog: filter it first,
  // as a person would.
  const std::string script = R"(
click @palette/filter
text builtin.add
wait @palette/builtin.add 20000
click @palette/builtin.add
frames 2
drag @pin/square/out/x_sq @pin/add/in/+
frames 2
drag @pin/negate/out/x_neg @pin/add/in/+
frames 2
screenshot linked.png
click @button/Save
frames 3
)";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["dirty"], false) << r.state["editor"]["status"];
  core::Experiment saved = core::load_experiment_file(file_);
  ASSERT_EQ(saved.nodes.size(), 6u);
  const core::NodeSpec& added = saved.nodes.back();
  EXPECT_EQ(added.id, "add");
  EXPECT_EQ(added.call, "builtin.add");
  EXPECT_EQ(added.in, (std::vector<std::string>{"x_sq", "x_neg"}));
  EXPECT_EQ(added.out, (std::vector<std::string>{"sum"}));  // builtin.add's output port, from the catalog
  EXPECT_TRUE(saved.layout.contains("add"));
  // Reopening what was saved shows the same graph, and saving it unedited changes nothing.
  std::string bytes = read_bytes(file_);
  auto again = run_gui(dir_, args({"--frames", "3"}), "click @button/Save\n", "reload");
  ASSERT_EQ(again.exit_code, 0) << again.log;
  EXPECT_EQ(again.state["editor"]["nodes"].size(), 6u);
  EXPECT_EQ(again.state["editor"]["nodes"][5]["in"], nlohmann::json({"x_sq", "x_neg"}));
  EXPECT_EQ(read_bytes(file_), bytes);
  // The new links were drawn (their midpoints are recorded like any item).
  auto link = item_rect(again.state, "link/square/x_sq/add");
  EXPECT_EQ(link.size(), 4u);
}

// A node added from the palette comes with its callee's ports as pins:
// squarer.square reads x and writes x_sq, which node 'square' already
// writes, so the new node writes x_sq_2 on port x_sq and the graph stays valid.
TEST_F(GuiEditorTest, APaletteNodeComesWiredToItsCalleesPorts) {
  const std::string script = R"(
click @palette/filter
text squarer.square
wait @palette/squarer.square 20000
click @palette/squarer.square
frames 2
wait @problems/ok 60000
frames 2
screenshot wired.png
)";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& nodes = r.state["editor"]["nodes"];
  ASSERT_EQ(nodes.size(), 6u) << r.state["editor"]["status"];
  EXPECT_EQ(nodes[5]["id"], "square_2");
  EXPECT_EQ(nodes[5]["in"], nlohmann::json({"x"}));
  EXPECT_EQ(nodes[5]["in_ports"], nlohmann::json::array());  // the list form: x is its own port
  EXPECT_EQ(nodes[5]["out"], nlohmann::json({"x_sq_2"}));
  EXPECT_EQ(nodes[5]["out_ports"], nlohmann::json({"x_sq"}));
  EXPECT_EQ(r.state["editor"]["issues"], nlohmann::json::array());
  // Its pins are drawn, named by their columns.
  EXPECT_EQ(item_rect(r.state, "pin/square_2/in/x").size(), 4u);
  EXPECT_EQ(item_rect(r.state, "pin/square_2/out/x_sq_2").size(), 4u);
}

bool boxes_meet(const nlohmann::json& a, const nlohmann::json& b) {
  auto f = [](const nlohmann::json& box, const char* k) { return box[k].get<float>(); };
  return f(a, "x") < f(b, "x") + f(b, "w") && f(b, "x") < f(a, "x") + f(a, "w") &&
         f(a, "y") < f(b, "y") + f(b, "h") && f(b, "y") < f(a, "y") + f(a, "h");
}

// Names the first two node boxes of a state dump that overlap (of any
// graph: the step's or a trainer phase's), else "".
std::string overlapping_boxes(const nlohmann::json& nodes) {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (size_t j = i + 1; j < nodes.size(); ++j)
      if (boxes_meet(nodes[i], nodes[j]))
        return nodes[i]["key"].get<std::string>() + " and " + nodes[j]["key"].get<std::string>();
  return "";
}

// Names the first phase group of a state dump whose frame meets another
// group's or a node of another graph, else "".
std::string overlapping_groups(const nlohmann::json& editor) {
  const nlohmann::json& groups = editor["groups"];
  for (size_t i = 0; i < groups.size(); ++i) {
    for (size_t j = i + 1; j < groups.size(); ++j)
      if (boxes_meet(groups[i], groups[j]))
        return groups[i]["phase"].get<std::string>() + " and " + groups[j]["phase"].get<std::string>();
    for (const auto& node : editor["nodes"])
      if (node["phase"] != groups[i]["phase"] && boxes_meet(groups[i], node))
        return groups[i]["phase"].get<std::string>() + " and node " + node["key"].get<std::string>();
  }
  return "";
}

// Auto-layout moves the nodes into Graphviz's layered layout as one edit:
// no two boxes overlap, every link runs left to right, Undo puts them back.
TEST_F(GuiEditorTest, AutoLayoutLaysTheGraphOutAsOneUndoableEdit) {
  auto r = run_gui(dir_, args(), "click @button/Auto-layout\nframes 3\nscreenshot laid_out.png\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& nodes = r.state["editor"]["nodes"];
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_EQ(overlapping_boxes(nodes), "");
  std::map<std::string, nlohmann::json> by_id;
  for (const auto& n : nodes) by_id[n["id"].get<std::string>()] = n;
  // demo.yaml: square -> total -> global -> metrics, each a rank to the right.
  for (auto [from, to] :
       {std::pair{"square", "total"}, {"negate", "total"}, {"total", "global"}, {"global", "metrics"}})
    EXPECT_LT(by_id[from]["x"].get<float>() + by_id[from]["w"].get<float>(), by_id[to]["x"].get<float>())
        << from << " -> " << to;
  EXPECT_TRUE(r.state["editor"]["dirty"]);
  EXPECT_TRUE(r.state["editor"]["can_undo"]);
  EXPECT_NE(r.state["editor"]["status"].get<std::string>().find("Graphviz"), std::string::npos);
  // Every box is drawn where the dump says, on screen.
  for (const char* id : {"node/square", "node/negate", "node/total", "node/global", "node/metrics"})
    EXPECT_EQ(item_rect(r.state, id).size(), 4u) << id;
  // Undo: back to the file's positions, nothing unsaved.
  auto undone =
      run_gui(dir_, args(), "click @button/Auto-layout\nframes 2\nclick @button/Undo\nframes 2\n", "undone");
  ASSERT_EQ(undone.exit_code, 0) << undone.log;
  EXPECT_FALSE(undone.state["editor"]["dirty"]);
  const nlohmann::json stored = core::load_experiment_file(file_).layout;
  for (const auto& n : undone.state["editor"]["nodes"]) {
    EXPECT_FLOAT_EQ(n["x"].get<float>(), stored[n["id"].get<std::string>()]["x"].get<float>()) << n["id"];
    EXPECT_FLOAT_EQ(n["y"].get<float>(), stored[n["id"].get<std::string>()]["y"].get<float>()) << n["id"];
  }
}

// Every shipped experiment opens with its stored layout: boxes apart, and
// in every row the input's label ends before the output's begins, measured
// in the font the canvas draws with (the canvas records a
// label_collision/<node> item where they meet).
TEST_F(GuiEditorTest, EveryShippedExperimentIsDrawnWithoutOverlappingBoxesOrLabels) {
  for (const auto& entry : std::filesystem::directory_iterator(test::source_path("experiments"))) {
    if (entry.path().extension() != ".yaml") continue;
    const std::string name = entry.path().stem().string();
    SCOPED_TRACE(name);
    auto r = run_gui(dir_,
                     {"--db", path("rlwb.db"), "--open", entry.path().string(), "--cli", "/nonexistent/rlwb",
                      "--frames", "3"},
                     "", name);
    ASSERT_EQ(r.exit_code, 0) << r.log;
    ASSERT_TRUE(r.state["editor"]["loaded"]);
    EXPECT_EQ(overlapping_boxes(r.state["editor"]["nodes"]), "");
    EXPECT_EQ(overlapping_groups(r.state["editor"]), "");
    for (const auto& [id, rect] : r.state["items"].items())
      EXPECT_EQ(id.rfind("label_collision/", 0), std::string::npos) << id << " at " << rect.dump();
  }
}

// The trainer phases are groups on the canvas: ppo.yaml's warm start and
// eval frame their nodes (edited like the step's), samples and save show
// their settings. Moving an eval node, adding a node into the warm start,
// linking, deleting and undoing are edits of trainer.<phase>.nodes, and the
// saved file holds them with the positions under "<phase>/<id>".
TEST_F(GuiEditorTest, TrainerPhasesAreGroupsWhoseNodesAreEditedLikeTheSteps) {
  const std::string ppo = path("ppo.yaml");
  write_bytes(ppo, read_bytes(test::source_path("experiments/ppo.yaml")));
  const std::vector<std::string> open = {"--db", path("rlwb.db"), "--open",
                                         ppo,    "--cli",         "/nonexistent/rlwb"};
  auto shown = run_gui(dir_, open, "frames 3\nclick @group/samples\nframes 2\n", "phases");
  ASSERT_EQ(shown.exit_code, 0) << shown.log;
  std::vector<std::string> phases;
  for (const auto& g : shown.state["editor"]["groups"]) phases.push_back(g["phase"]);
  EXPECT_EQ(phases, (std::vector<std::string>{"warm_start", "eval", "samples", "save"}));
  for (const char* id : {"group/warm_start", "group/eval", "node/warm_start/sft", "node/eval/eval_gen",
                         "node/eval/eval_score", "node/eval/[task]", "pin/eval/eval_score/in/response_text",
                         "link/eval/eval_gen/response_text/eval/eval_score"})
    EXPECT_EQ(item_rect(shown.state, id).size(), 4u) << id << " not drawn";
  EXPECT_EQ(shown.state["editor"]["inspected_phase"], "samples") << "clicking a group selects its phase";
  EXPECT_EQ(overlapping_groups(shown.state["editor"]), "");

  const std::string edit = R"(frames 2
drag @node/eval/eval_gen +0,30
frames 2
click @group/warm_start
frames 2
click @palette/actor.generate
frames 2
drag @pin/warm_start/generate/out/responses @node/warm_start/sft
frames 2
screenshot linked.png
key delete
frames 2
key ctrl+z
frames 2
click @button/Save
frames 3
)";
  auto edited = run_gui(dir_, open, edit, "edited");
  ASSERT_EQ(edited.exit_code, 0) << edited.log;
  EXPECT_FALSE(edited.state["editor"]["dirty"]) << edited.state["editor"]["status"];
  const core::Experiment saved = core::load_experiment_file(ppo);
  std::vector<std::string> warm, eval;
  for (const auto& n : saved.trainer["warm_start"]["nodes"]) warm.push_back(n["id"]);
  for (const auto& n : saved.trainer["eval"]["nodes"]) eval.push_back(n["id"]);
  EXPECT_EQ(warm, (std::vector<std::string>{"sft", "generate"}));
  EXPECT_EQ(eval, (std::vector<std::string>{"eval_gen", "eval_score"}));
  EXPECT_EQ(saved.trainer["warm_start"]["nodes"][0]["in"],
            nlohmann::json({"prompts", "answers", "responses"}));
  EXPECT_EQ(saved.nodes.size(), 7u) << "the step's graph is untouched";
  const core::Experiment shipped = core::load_experiment_file(test::source_path("experiments/ppo.yaml"));
  ASSERT_TRUE(saved.layout.contains("eval/eval_gen"));
  EXPECT_GT(saved.layout["eval/eval_gen"]["y"].get<float>(),
            shipped.layout.value("eval/eval_gen", nlohmann::json{{"y", 0}})["y"].get<float>() + 20);
  EXPECT_TRUE(saved.layout.contains("warm_start/generate"));
  // Reopened, the saved file shows the same groups, and the validator takes its layout keys.
  auto reloaded = run_gui(dir_, open, "frames 4\n", "reloaded");
  ASSERT_EQ(reloaded.exit_code, 0) << reloaded.log;
  EXPECT_EQ(item_rect(reloaded.state, "node/warm_start/generate").size(), 4u);
  for (const auto& issue : reloaded.state["editor"]["issues"])
    EXPECT_EQ(issue["message"].get<std::string>().find("layout"), std::string::npos) << issue.dump();
}

// Closing the window with unsaved edits asks first: Cancel goes on editing,
// Discard quits leaving the file as it was, Save writes the edits and
// quits. With nothing unsaved it closes at once.
TEST_F(GuiEditorTest, ClosingWithUnsavedEditsAsksFirst) {
  const std::string original = read_bytes(file_);
  const std::string edit = "drag @node/metrics +120,0\nframes 2\nclose\nframes 3\n";
  const std::string after = "frames 2\nclick @node/square\nframes 2\n";  // shows whether it went on
  auto asked = run_gui(dir_, args(), edit + "screenshot asked.png\n", "asked");
  ASSERT_EQ(asked.exit_code, 0) << asked.log;
  EXPECT_EQ(asked.state["editor"]["pending"], "quit");
  EXPECT_EQ(item_rect(asked.state, "unsaved/dialog").size(), 4u);
  EXPECT_EQ(item_rect(asked.state, "unsaved/discard").size(), 4u);
  EXPECT_EQ(read_bytes(file_), original);

  auto cancel = run_gui(dir_, args(), edit + "click @unsaved/cancel\n" + after, "cancel");
  ASSERT_EQ(cancel.exit_code, 0) << cancel.log;
  EXPECT_EQ(cancel.state["editor"]["pending"], "");
  EXPECT_TRUE(cancel.state["editor"]["dirty"]);
  EXPECT_EQ(cancel.state["editor"]["selected"], nlohmann::json({"square"})) << "it did not go on";
  EXPECT_EQ(read_bytes(file_), original);

  auto discard = run_gui(dir_, args(), edit + "click @unsaved/discard\n" + after, "discard");
  ASSERT_EQ(discard.exit_code, 0) << discard.log;
  EXPECT_NE(discard.state["editor"]["selected"], nlohmann::json({"square"})) << "it went on after Discard";
  EXPECT_EQ(read_bytes(file_), original);

  auto save = run_gui(dir_, args(), edit + "click @unsaved/save\n" + after, "save");
  ASSERT_EQ(save.exit_code, 0) << save.log;
  EXPECT_NE(save.state["editor"]["selected"], nlohmann::json({"square"})) << "it went on after Save";
  EXPECT_GT(core::load_experiment_file(file_).layout["metrics"]["x"].get<float>(), 850.0f);

  auto clean = run_gui(dir_, args(), "close\n" + after, "clean");
  ASSERT_EQ(clean.exit_code, 0) << clean.log;
  EXPECT_NE(clean.state["editor"]["selected"], nlohmann::json({"square"})) << "a clean editor did not close";
}

// Opening another file with unsaved edits asks the same; Discard opens it.
TEST_F(GuiEditorTest, OpeningAnotherFileWithUnsavedEditsAsksFirst) {
  const std::string original = read_bytes(file_);
  const std::string other = path("other.yaml");
  write_bytes(other, original);
  const std::string open = "drag @node/metrics +120,0\nframes 2\nclick @editor/path\nkey ctrl+a\ntext " +
                           other + "\nclick @button/Open\nframes 3\n";
  auto asked = run_gui(dir_, args(), open, "asked");
  ASSERT_EQ(asked.exit_code, 0) << asked.log;
  EXPECT_EQ(asked.state["editor"]["pending"], "open " + other);
  EXPECT_EQ(asked.state["editor"]["file"], file_) << "opened over the unsaved edits";
  EXPECT_TRUE(asked.state["editor"]["dirty"]);
  auto discarded = run_gui(dir_, args(), open + "click @unsaved/discard\nframes 2\n", "discarded");
  ASSERT_EQ(discarded.exit_code, 0) << discarded.log;
  EXPECT_EQ(discarded.state["editor"]["file"], other);
  EXPECT_FALSE(discarded.state["editor"]["dirty"]);
  EXPECT_EQ(discarded.state["editor"]["pending"], "");
  EXPECT_EQ(read_bytes(file_), original);
}

// A graph with errors is not launched: the Launch screen says why (the
// first problem and how many) before anything starts.
TEST_F(GuiEditorTest, AGraphWithErrorsIsNotLaunchedAndTheLaunchScreenSaysWhy) {
  write_demo_with_a_bad_call();
  const std::string script = R"(
click @tab/Launch
wait @"button/Start run" 20000
click @"button/Start run"
frames 3
)";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string status = r.state["launch"]["status"];
  EXPECT_EQ(status.rfind("not started: 1 error(s)", 0), 0u) << status;
  EXPECT_NE(status.find("has no method 'global_summ'"), std::string::npos) << status;
  EXPECT_EQ(r.state["launch"]["argv"], nlohmann::json::array()) << "something was started";
  EXPECT_FALSE(std::filesystem::exists(path("rlwb.db"))) << "a run was recorded";
}

// A graph built on another (`defaults: [grpo.yaml]`) shows on each node
// what it inherits and what the file sets itself.
TEST_F(GuiEditorTest, AGraphBuiltOnAnotherShowsWhatEachNodeInheritsAndOverrides) {
  auto r = run_gui(dir_,
                   {"--db", path("rlwb.db"), "--open", test::source_path("experiments/reinforce_pp.yaml"),
                    "--cli", "/nonexistent/rlwb", "--frames", "3"},
                   "", "derived");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  std::map<std::string, std::string> origin;
  for (const auto& n : r.state["editor"]["nodes"]) origin[n["id"]] = n["origin"];
  EXPECT_EQ(origin["gen"], "from grpo.yaml");
  EXPECT_EQ(origin["adv"], "from grpo.yaml; in set here");
  EXPECT_EQ(origin["update"], "from grpo.yaml; in set here");
  EXPECT_FALSE(r.state["editor"]["dirty"]);
  EXPECT_EQ(item_rect(r.state, "origin/adv").size(), 4u) << "not drawn";
  // The base itself inherits nothing.
  auto base = run_gui(dir_,
                      {"--db", path("rlwb.db"), "--open", test::source_path("experiments/grpo.yaml"), "--cli",
                       "/nonexistent/rlwb", "--frames", "3"},
                      "", "base");
  ASSERT_EQ(base.exit_code, 0) << base.log;
  for (const auto& n : base.state["editor"]["nodes"]) EXPECT_EQ(n["origin"], "") << n["id"];
}

// New... lists the experiment files as templates; picking one writes a
// copy beside the open file and opens it. A template built on another
// (rloo.yaml on grpo.yaml) is copied resolved, so the copy loads on its own.
TEST_F(GuiEditorTest, NewFromATemplateWritesACopyBesideTheOpenFileAndOpensIt) {
  const std::vector<std::string> templates = {"--templates", test::source_path("experiments")};
  const std::string pick =
      "click @button/New...\nwait @template/rloo 10000\nclick @template/rloo\nframes 3\n";
  auto r = run_gui(dir_, args(templates), pick + "screenshot new.png\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const std::string copy = path("rloo-new.yaml");
  EXPECT_EQ(r.state["editor"]["file"], copy) << r.state["editor"]["status"];
  EXPECT_TRUE(r.state["editor"]["loaded"]);
  EXPECT_FALSE(r.state["editor"]["dirty"]);
  ASSERT_TRUE(std::filesystem::exists(copy));
  const core::Experiment made = core::load_experiment_file(copy);  // no grpo.yaml beside it
  const core::Experiment original = core::load_experiment_file(test::source_path("experiments/rloo.yaml"));
  EXPECT_TRUE(made.bases.empty());
  EXPECT_EQ(made.nodes.size(), original.nodes.size());
  EXPECT_EQ(made.algorithm, original.algorithm);
  // Again: a second copy, the first one kept.
  auto again = run_gui(dir_, args(templates), pick, "again");
  EXPECT_EQ(again.state["editor"]["file"], path("rloo-new-2.yaml"));
  EXPECT_TRUE(std::filesystem::exists(copy));
}

// The search box marks every node whose id, call, column or port matches;
// Enter selects the next match and centres the canvas on it. Clicking the
// minimap centres the canvas on that point.
TEST_F(GuiEditorTest, SearchCentresEachMatchAndTheMinimapMovesTheView) {
  const std::string search = "click @editor/search\ntext global_total\nkey enter\nframes 2\n";
  auto first = run_gui(dir_, args(), search + "screenshot found.png\n", "first");
  ASSERT_EQ(first.exit_code, 0) << first.log;
  EXPECT_EQ(first.state["editor"]["selected"], nlohmann::json({"global"}));
  EXPECT_EQ(item_rect(first.state, "hit/global").size(), 4u);
  EXPECT_EQ(item_rect(first.state, "hit/metrics").size(), 4u);
  EXPECT_EQ(item_rect(first.state, "hit/square").size(), 0u);
  EXPECT_NE(first.state["editor"]["status"].get<std::string>().find("2 match(es)"), std::string::npos);
  const auto canvas = item_rect(first.state, "canvas"), global = item_rect(first.state, "node/global");
  ASSERT_EQ(global.size(), 4u);
  EXPECT_NEAR((global[0] + global[2]) / 2, (canvas[0] + canvas[2]) / 2, 150) << "not centred";
  auto next = run_gui(dir_, args(), search + "key enter\nframes 2\n", "next");
  EXPECT_EQ(next.state["editor"]["selected"], nlohmann::json({"metrics"}));

  // The minimap: the part shown is outlined; a click elsewhere on it moves there.
  auto before = run_gui(dir_, args({"--frames", "2"}), "", "before");
  const auto map = item_rect(before.state, "minimap"), view = item_rect(before.state, "minimap/view");
  ASSERT_EQ(map.size(), 4u);
  ASSERT_EQ(view.size(), 4u);
  auto moved = run_gui(dir_, args(), "frames 2\nclick @minimap~-70,-10\nframes 2\n", "moved");
  const auto offset0 = before.state["editor"]["offset"], offset1 = moved.state["editor"]["offset"];
  // Left of and above the graph's middle: the canvas now centres a point up
  // and to the left, so the world moves right and down on screen.
  EXPECT_GT(offset1[0].get<float>(), offset0[0].get<float>() + 50) << offset0 << " -> " << offset1;
  EXPECT_GT(offset1[1].get<float>(), offset0[1].get<float>() + 10) << offset0 << " -> " << offset1;
  const auto square0 = item_rect(before.state, "node/square"),
             square1 = item_rect(moved.state, "node/square");
  ASSERT_EQ(square0.size(), 4u);
  ASSERT_EQ(square1.size(), 4u);
  EXPECT_GT(square1[0], square0[0] + 50) << "the boxes did not move right on screen";
  EXPECT_FALSE(moved.state["editor"]["dirty"]) << "a click on the minimap edited the graph";
}

TEST_F(GuiEditorTest, WheelZoomsTowardTheCursorAndTheInspectorRenamesANode) {
  const std::string script = R"(
click @node/total
frames 2
click @inspector/id
key ctrl+a
text sum
key enter
frames 2
scroll @node/global 3
frames 2
)";
  auto before = run_gui(dir_, args({"--frames", "2"}), "", "before");
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["nodes"][2]["id"], "sum");
  EXPECT_EQ(r.state["editor"]["selected"], nlohmann::json({"sum"}));
  EXPECT_GT(r.state["editor"]["zoom"].get<float>(), before.state["editor"]["zoom"].get<float>());
  // Zooming toward the cursor kept the node under it: 'global' still contains the point scrolled
  // at.
  auto was = item_rect(before.state, "node/global"), now = item_rect(r.state, "node/global");
  ASSERT_EQ(was.size(), 4u);
  ASSERT_EQ(now.size(), 4u);
  float cx = (was[0] + was[2]) / 2.0f, cy = (was[1] + was[3]) / 2.0f;
  EXPECT_TRUE(now[0] <= cx && cx <= now[2] && now[1] <= cy && cy <= now[3]);
  EXPECT_GT(now[2] - now[0], was[2] - was[0]);
}

TEST_F(GuiEditorTest, RightDragPansTheCanvasAndFrameAllBringsEveryNodeBack) {
  // Pan 200 px right: 'metrics' (the rightmost node) leaves the canvas and is
  // not drawn. Frame all: every node is inside again.
  const std::string pan = "drag @canvas~-300,0 @canvas~-100,0 right\nframes 2\n";
  auto before = run_gui(dir_, args({"--frames", "2"}), "", "before");
  auto panned = run_gui(dir_, args(), pan, "panned");
  ASSERT_EQ(panned.exit_code, 0) << panned.log;
  auto was = item_rect(before.state, "node/square"), now = item_rect(panned.state, "node/square");
  ASSERT_EQ(was.size(), 4u);
  ASSERT_EQ(now.size(), 4u);
  EXPECT_NEAR(now[0] - was[0], 200, 10);
  EXPECT_NEAR(now[1], was[1], 2);
  EXPECT_FALSE(panned.state["editor"]["dirty"]) << "panning is not an edit";
  EXPECT_EQ(item_rect(before.state, "node/metrics").size(), 4u);
  EXPECT_EQ(item_rect(panned.state, "node/metrics").size(), 0u) << "metrics is off the canvas";

  auto framed = run_gui(dir_, args(), pan + "click @\"button/Frame all\"\nframes 3\n", "framed");
  ASSERT_EQ(framed.exit_code, 0) << framed.log;
  auto canvas = item_rect(framed.state, "canvas");
  ASSERT_EQ(canvas.size(), 4u);
  for (const auto& node : framed.state["editor"]["nodes"]) {
    auto rect = item_rect(framed.state, "node/" + node["id"].get<std::string>());
    ASSERT_EQ(rect.size(), 4u) << node["id"];
    EXPECT_GE(rect[0], canvas[0]) << node["id"];
    EXPECT_LE(rect[2], canvas[2]) << node["id"];
    EXPECT_GE(rect[1], canvas[1]) << node["id"];
    EXPECT_LE(rect[3], canvas[3]) << node["id"];
  }
}

TEST_F(GuiEditorTest, ClickALinkAndDeleteItThenUndo) {
  const std::string script = "click @link/square/x_sq/total\nframes 2\nkey delete\nframes 2\n";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["nodes"][2]["id"], "total");
  EXPECT_EQ(r.state["editor"]["nodes"][2]["in"], nlohmann::json({"x_neg"}));
  EXPECT_EQ(r.state["editor"]["nodes"].size(), 5u) << "only the link went";
  EXPECT_EQ(item_rect(r.state, "link/square/x_sq/total").size(), 0u);
  auto undone = run_gui(dir_, args(), script + "key ctrl+z\nframes 2\n", "undone");
  ASSERT_EQ(undone.exit_code, 0) << undone.log;
  EXPECT_EQ(undone.state["editor"]["nodes"][2]["in"], nlohmann::json({"x_sq", "x_neg"}));
  EXPECT_FALSE(undone.state["editor"]["dirty"]);
}

TEST_F(GuiEditorTest, AnInvalidLinkDoesNotSnap) {
  // global depends on square; linking global's output back into square is a cycle.
  const std::string script = R"(
drag @pin/global/out/global_total @pin/square/in/+
frames 2
)";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["nodes"][0]["in"], nlohmann::json({"x"}));
  EXPECT_FALSE(r.state["editor"]["dirty"]);
}

TEST_F(GuiEditorTest, MoveBoxSelectDeleteAndUndoEachGesture) {
  // Move 'metrics' right, click empty canvas, box-select square and negate, delete them.
  const std::string gestures = R"(
drag @node/metrics +120,0
frames 2
drag @canvas~-20,-60 @canvas~-19,-59
drag @node/square~-30,-20 @node/negate~120,40
key delete
frames 2
)";
  auto done = run_gui(dir_, args(), gestures, "gestures");
  ASSERT_EQ(done.exit_code, 0) << done.log;
  const auto& left = done.state["editor"]["nodes"];
  ASSERT_EQ(left.size(), 3u) << done.state["editor"]["status"];
  EXPECT_EQ(left[0]["id"], "total");
  EXPECT_GT(left[2]["x"].get<float>(), 850.0f) << "metrics was dragged right (from x=800)";
  EXPECT_TRUE(done.state["editor"]["dirty"]);
  EXPECT_EQ(item_rect(done.state, "node/square").size(), 0u) << "a deleted node is still drawn";

  // The same, then two undos: the delete, then the move (the clicks made no entry).
  auto undone = run_gui(dir_, args(), gestures + "key ctrl+z\nframes 2\nkey ctrl+z\nframes 2\n", "undone");
  ASSERT_EQ(undone.exit_code, 0) << undone.log;
  const auto& nodes = undone.state["editor"]["nodes"];
  ASSERT_EQ(nodes.size(), 5u);
  EXPECT_FLOAT_EQ(nodes[4]["x"].get<float>(), 800.0f);
  EXPECT_FALSE(undone.state["editor"]["can_undo"]);
  EXPECT_TRUE(undone.state["editor"]["can_redo"]);
  EXPECT_FALSE(undone.state["editor"]["dirty"]);
  EXPECT_EQ(item_rect(undone.state, "node/square").size(), 4u);
}

TEST_F(GuiEditorTest, CopyPasteAndPreWiredNodeFromADroppedLink) {
  const std::string script = R"(
click @node/total
key ctrl+c
key ctrl+v
frames 2
drag @pin/total/out/total @canvas~300,250
wait @prewire/builtin.column_means 20000
click @prewire/builtin.column_means
frames 2
)";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& nodes = r.state["editor"]["nodes"];
  ASSERT_EQ(nodes.size(), 7u) << r.state["editor"]["status"];
  EXPECT_EQ(nodes[5]["id"], "total_2");
  EXPECT_EQ(nodes[5]["out"], nlohmann::json({"total_2"}));
  EXPECT_EQ(nodes[6]["call"], "builtin.column_means");
  EXPECT_EQ(nodes[6]["in"], nlohmann::json({"total"}));
}

TEST_F(GuiEditorTest, TheProblemsListShowsAnIssueOfTheFileWithItsLineAndNode) {
  const int line = write_demo_with_a_bad_call();
  auto r = run_gui(dir_, catalog_args(), "wait @problem/0 60000\nframes 2\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const auto& issues = r.state["editor"]["issues"];
  ASSERT_EQ(issues.size(), 1u) << issues.dump();
  EXPECT_EQ(issues[0]["node"], "global");
  EXPECT_EQ(issues[0]["line"], line);
  EXPECT_EQ(issues[0]["severity"], "error");
  EXPECT_NE(issues[0]["message"].get<std::string>().find("has no method 'global_summ'"), std::string::npos)
      << issues[0].dump();
  EXPECT_TRUE(r.state["editor"]["issues_current"]);
  // Listed in the Problems panel (left column) in red, and badged on its node.
  auto problem = item_rect(r.state, "problem/0");
  ASSERT_EQ(problem.size(), 4u);
  EXPECT_LT(problem[0], item_rect(r.state, "canvas")[0]);
  EXPECT_GT(count_color(r.screenshot, problem[0], problem[1], problem[2], problem[3], 0xFF7366, 30), 10)
      << "the problem is not listed in red";
  EXPECT_FALSE(item_rect(r.state, "issue/global").empty());
  EXPECT_TRUE(item_rect(r.state, "problems/no_catalog").empty());
}

TEST_F(GuiEditorTest, FixingTheCallInTheInspectorClearsItsIssue) {
  write_demo_with_a_bad_call();
  const std::string script = R"(
wait @problem/0 60000
click @node/global
frames 2
click @inspector/call
key ctrl+a
text squarer.global_sum
key enter
wait @problems/ok 60000
frames 2
)";
  auto r = run_gui(dir_, catalog_args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["nodes"][3]["call"], "squarer.global_sum");
  EXPECT_EQ(r.state["editor"]["issues"], nlohmann::json::array());
  EXPECT_TRUE(r.state["editor"]["issues_current"]);
  EXPECT_TRUE(item_rect(r.state, "problem/0").empty());
  EXPECT_TRUE(item_rect(r.state, "issue/global").empty());
}

TEST_F(GuiEditorTest, WithoutRlwbACallNoRoleHasIsAProblemOnItsNode) {
  const std::string script = R"(
click @palette/custom
text squarer.nope
click @button/Add
wait @issue/nope 60000
frames 2
)";
  auto r = run_gui(dir_, args(), script);  // --cli /nonexistent/rlwb, no --catalog file
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_EQ(r.state["editor"]["validator"], "done");
  EXPECT_TRUE(item_rect(r.state, "problems/no_catalog").empty()) << "rlwb-gui has this build's catalog";
  bool found = false;
  for (const auto& issue : r.state["editor"]["issues"])
    if (issue["node"] == "nope" && issue["severity"] == "error") found = true;
  EXPECT_TRUE(found) << r.state["editor"]["issues"].dump();
  // The node is outlined in red.
  auto node = item_rect(r.state, "node/nope");
  ASSERT_EQ(node.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, node[0] - 3, node[1] - 3, node[2] + 3, node[3] + 60, 0xEB463C, 20), 20);
}

TEST_F(GuiEditorTest, AnIssueOfAPhaseNodeDoesNotMarkTheGraphNodeWithTheSameId) {
  // An eval node named like the graph's node "square", with a bad method.
  std::string yaml = read_bytes(file_);
  const std::string trainer = "trainer:\n  steps: 3\n";
  ASSERT_NE(yaml.find(trainer), std::string::npos);
  yaml.replace(yaml.find(trainer), trainer.size(),
               trainer +
                   "  eval:\n    every: 1\n    nodes:\n"
                   "      - {id: square, call: squarer.nope, in: [x], out: [y]}\n");
  write_bytes(file_, yaml);
  const std::string script = R"(
wait @problem/0 60000
frames 2
)";
  // With the catalog: without one, the call the file makes would count as known.
  auto r = run_gui(dir_, catalog_args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  bool phase_issue = false;
  for (const auto& issue : r.state["editor"]["issues"])
    if (issue["node"] == "square" && issue["phase"] == "eval") phase_issue = true;
  EXPECT_TRUE(phase_issue) << r.state["editor"]["issues"].dump();
  // The graph's own "square" is fine: no problem badge on it.
  EXPECT_FALSE(item_rect(r.state, "node/square").empty());
  EXPECT_TRUE(item_rect(r.state, "issue/square").empty());
}

TEST_F(GuiEditorTest, AFileThatDoesNotParseShowsItsErrorAndIsNotOverwritten) {
  const std::string broken = "name: broken\nnodes:\n  - {id: a, call: x.y, in: [a\n";
  write_bytes(file_, broken);
  auto r = run_gui(dir_, args(), "click @button/Save\nkey ctrl+s\nframes 3\n");
  ASSERT_EQ(r.exit_code, 0) << r.log;
  EXPECT_FALSE(r.state["editor"]["loaded"]);
  EXPECT_FALSE(r.state["editor"]["load_issues"].empty());
  EXPECT_EQ(read_bytes(file_), broken);
  auto error = item_rect(r.state, "load_error");
  ASSERT_EQ(error.size(), 4u);
  EXPECT_GT(count_color(r.screenshot, error[0], error[1], error[0] + 400, error[1] + 60, 0xFF7366, 30), 30)
      << "the error is not shown in red";
}

}  // namespace
}  // namespace rlwb::ui
