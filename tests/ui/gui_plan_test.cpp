// The editor's Plan action driven as a person would, under xvfb-run: open
// ppo.yaml, Plan..., ask for 8 devices, Search, pick the second plan,
// Apply; the document's models then have that plan's pools and layouts,
// Undo gives back the file as it was, Redo the plan again. Bad requests
// show their message in the panel and leave the document alone.
#include <gtest/gtest.h>

#include <optional>

#include "core/graph/experiment.h"
#include "tests/test_paths.h"
#include "tests/ui/ui_test_support.h"

namespace rlwb::ui {
namespace {

using test::count_color;
using test::item_rect;
using test::read_bytes;
using test::run_gui;
using test::write_bytes;

// A selected row of the plans' table as the screenshot shows it.
constexpr uint32_t kSelectedRow = 0x294362;

class GuiPlanTest : public test::TempDirTest {
 protected:
  void SetUp() override {
    TempDirTest::SetUp();
    if (!std::filesystem::exists(rlwb::testing::kGuiBin)) GTEST_SKIP() << "rlwb-gui not built";
    // No calibrated profile: the panel starts on the first built-in
    // (A100-80G), the same on every machine.
    home_.emplace("RLWB_HOME", path("home"));
    file_ = path("ppo.yaml");
    original_ = read_bytes(test::source_path("experiments/ppo.yaml"));
    write_bytes(file_, original_);
  }
  std::vector<std::string> args() {
    return {"--db", path("rlwb.db"), "--open", file_, "--cli", "/nonexistent/rlwb"};
  }
  // Opens the panel, types `devices` and presses Search.
  static std::string search_script(const std::string& devices) {
    return "click @button/Plan...\n"
           "wait @plan/devices 20000\n"
           "click @plan/devices\n"
           "frames 2\n"
           "key ctrl+a\n"
           "text " +
           devices +
           "\n"
           "key enter\n"
           "frames 2\n"
           "click @button/Search\n"
           "frames 3\n";
  }
  // Searches 8 devices, picks plan #2 and applies it.
  static std::string apply_second_plan_script() {
    return search_script("8") +
           "wait @plan/row/2 20000\n"
           "click @plan/row/2\n"
           "frames 2\n"
           "click @\"button/Apply plan\"\n"
           "frames 3\n";
  }
  // Each model's pool and dp/tp/pp as the state dump lists them, from a
  // plan as the dump lists it (`rlwb plan --json`'s form).
  static nlohmann::json models_of_plan(const nlohmann::json& plan) {
    nlohmann::json models = nlohmann::json::object();
    for (const auto& set : plan["sets"])
      for (const auto& [name, layout] : set["models"].items())
        models[name] = {
            {"pool", set["pool"]}, {"dp", layout["dp"]}, {"tp", layout["tp"]}, {"pp", layout["pp"]}};
    return models;
  }
  std::string file_, original_;
  std::optional<test::ScopedEnv> home_;
};

TEST_F(GuiPlanTest, SearchPickApplyAndSaveWritesThePlansPoolsAndLayouts) {
  const std::string script = apply_second_plan_script() +
                             "screenshot plan_applied.png\n"
                             "click @button/Save\n"
                             "frames 3\n";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  const nlohmann::json& plan = r.state["editor"]["plan"];
  EXPECT_EQ(plan["error"], "") << plan;
  EXPECT_EQ(plan["request"]["devices"], 8);
  EXPECT_EQ(plan["profile"], "A100-80G");
  ASSERT_GT(plan["plans"].size(), 1u) << plan;
  EXPECT_EQ(plan["selected"], 1);
  EXPECT_EQ(plan["note"].get<std::string>().rfind("applied plan #2", 0), 0u) << plan["note"];
  // Ranked: the simulated step never gets faster down the list.
  for (size_t i = 1; i < plan["plans"].size(); ++i)
    EXPECT_LE(plan["plans"][i - 1]["step_seconds"].get<double>(),
              plan["plans"][i]["step_seconds"].get<double>());
  // The document now has plan #2's pools and layouts...
  const nlohmann::json want = models_of_plan(plan["plans"][1]);
  EXPECT_EQ(r.state["editor"]["models"], want);
  for (const auto& set : plan["plans"][1]["sets"]) {
    const std::string pool = set["pool"];
    EXPECT_EQ(r.state["editor"]["pools"][pool],
              nlohmann::json({{"workers", set["devices"]}, {"device", "cuda"}}));
  }
  EXPECT_EQ(r.state["editor"]["pools"].size(), plan["plans"][1]["sets"].size());
  // ...and so does the file saved from it.
  EXPECT_EQ(r.state["editor"]["dirty"], false) << r.state["editor"]["status"];
  const core::Experiment saved = core::load_experiment_file(file_);
  for (const auto& [name, layout] : want.items()) {
    EXPECT_EQ(saved.models.at(name).pool, layout["pool"]) << name;
    EXPECT_EQ(saved.models.at(name).parallel.dp, layout["dp"]) << name;
    EXPECT_EQ(saved.models.at(name).parallel.tp, layout["tp"]) << name;
  }
  // The panel was drawn over the canvas with its rows, the breakdown and Apply.
  for (const char* id : {"plan/window", "plan/row/1", "plan/row/2", "plan/selected", "button/Apply plan",
                         "plan/summary", "plan/note"})
    EXPECT_EQ(item_rect(r.state, id).size(), 4u) << id << " not drawn";
  EXPECT_TRUE(item_rect(r.state, "plan/error").empty());
  // The selected row is highlighted (ImGui's header colour over the
  // window) in the screenshot, the others not.
  const Image shot = read_png(path("plan_applied.png"));
  ASSERT_EQ(shot.width, 1600);
  auto highlighted = [&](const char* id) {
    const auto row = item_rect(r.state, id);
    return count_color(shot, row[0], row[1], row[0] + 300, row[3], kSelectedRow, 10);
  };
  EXPECT_GT(highlighted("plan/row/2"), 1000) << "plan #2's row is not highlighted";
  EXPECT_LT(highlighted("plan/row/1"), 100) << "plan #1's row is highlighted too";
}

TEST_F(GuiPlanTest, UndoGivesBackTheFileAsItWasAndRedoThePlan) {
  const std::string script = apply_second_plan_script() +
                             "click @button/Undo\n"
                             "frames 2\n"
                             "click @button/Save\n"
                             "frames 2\n"
                             "click @button/Redo\n"
                             "frames 3\n";
  auto r = run_gui(dir_, args(), script);
  ASSERT_EQ(r.exit_code, 0) << r.log;
  // Saved after Undo: byte for byte the file that was opened.
  EXPECT_EQ(read_bytes(file_), original_);
  // After Redo the plan is back (unsaved), and the plans still belong to it.
  const nlohmann::json& plan = r.state["editor"]["plan"];
  ASSERT_GT(plan["plans"].size(), 1u) << plan;
  EXPECT_EQ(r.state["editor"]["models"], models_of_plan(plan["plans"][1]));
  EXPECT_EQ(r.state["editor"]["dirty"], true);
  EXPECT_EQ(plan["current"], true);
}

TEST_F(GuiPlanTest, BadRequestsShowTheirMessageAndLeaveTheDocumentAlone) {
  struct Case {
    std::string devices, message;
  };
  for (const Case& c : {Case{"0", "devices: give at least 1 device to plan for"},
                        Case{"1000", "no placement of the 3 models fits on 1000 A100-80G device(s)"}}) {
    auto r =
        run_gui(dir_, args(), search_script(c.devices) + "screenshot plan_error.png\n", "bad" + c.devices);
    ASSERT_EQ(r.exit_code, 0) << r.log;
    const nlohmann::json& plan = r.state["editor"]["plan"];
    EXPECT_EQ(plan["request"]["devices"], std::stoi(c.devices));
    EXPECT_NE(plan["error"].get<std::string>().find(c.message), std::string::npos) << plan["error"];
    EXPECT_EQ(plan["plans"].size(), 0u);
    // The editor's status line says so in one line; the panel has the rest.
    const std::string status = r.state["editor"]["status"];
    EXPECT_EQ(status.rfind("no plan: ", 0), 0u) << status;
    EXPECT_EQ(status.find('\n'), std::string::npos) << status;
    EXPECT_EQ(r.state["editor"]["dirty"], false);
    EXPECT_EQ(r.state["editor"]["can_undo"], false);
    EXPECT_EQ(r.state["editor"]["pools"], nlohmann::json({{"train", {{"workers", 2}, {"device", "cpu"}}}}));
    // The message is on screen, in the panel's error colour.
    const auto error = item_rect(r.state, "plan/error");
    ASSERT_EQ(error.size(), 4u) << "no error text drawn for devices " << c.devices;
    const auto window = item_rect(r.state, "plan/window");
    EXPECT_GE(error[1], window[1]);
    EXPECT_LE(error[3], window[3]);
    EXPECT_GT(count_color(r.screenshot, error[0], error[1], error[2], error[3], 0xFF7366, 30), 20)
        << "devices " << c.devices << ": the error is not drawn in red";
  }
  EXPECT_EQ(read_bytes(file_), original_);
}

}  // namespace
}  // namespace rlwb::ui
