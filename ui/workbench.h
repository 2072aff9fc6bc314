// RLWB's workbench: the whole GUI as one state struct (AppState) and one
// function that draws it (draw_workbench), Dear ImGui style. Screens:
//   Editor     graph files (ui/graph)        Runs     the runs table (ui/runs)
//   Dashboard  one run, live                 Compare  runs side by side
//   Launch     run the open experiment (ui/launch)
//   Profile    one run's profile: flame graph, step timeline, findings (ui/profile)
// app/gui_main.cpp parses the command line into WorkbenchOptions and hands
// draw_workbench to the frame loop (ui/platform/frame_loop.h).
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "ui/graph/graph_editor.h"
#include "ui/launch/launch_view.h"
#include "ui/profile/profile_loader.h"
#include "ui/profile/profile_view.h"
#include "ui/runs/run_store.h"
#include "ui/runs/runs_views.h"
#include "core/validate/validator.h"

namespace rlwb::ui {

enum class Screen { editor, runs, dashboard, compare, launch, profile };
const char* screen_name(Screen screen);
bool parse_screen(const std::string& name, Screen& out);

struct WorkbenchOptions {
  std::string db = "runs/rlwb.db";
  std::string open_file;                  // --open
  std::vector<int64_t> compare;           // --compare 3,4
  int64_t dashboard_run = 0;              // --run 3 (the dashboard's, or with --screen profile the profile's)
  std::string screen;                     // --screen runs (default: from the above)
  std::string cli;                        // rlwb, for launching runs
  std::string catalog;                    // optional catalog JSON (ui/graph/editor_catalog.h)
  std::string templates = "experiments";  // the experiment files New... offers as templates
  // This build's catalog (roles, builtins, tasks, reward types), assembled
  // by the program (app/gui_main.cpp) so the ui layer needs no LibTorch;
  // used when no catalog file is given.
  std::shared_ptr<const core::MethodCatalog> build_catalog;
  // The tokenizers' vocabularies, for the editor's Plan panel to read model
  // shapes (app/tokenizer_vocab.h); without it the panel says it cannot plan.
  core::planner::TokenizerVocab tokenizer_vocab;
  int poll_ms = 250;
};

struct AppState {
  Screen screen = Screen::editor;
  bool switch_screen = true;  // select `screen`'s tab on the next frame
  GraphEditor editor;
  RunStore store;
  RunsTableState runs;
  DashboardState dashboard;
  CompareState compare;
  LaunchState launch;
  ProfileLoader profiles;
  ProfileState profile;
  std::string message;  // startup problems (e.g. a catalog that did not load)
};

void init_workbench(AppState& app, const WorkbenchOptions& options);
void draw_workbench(AppState& app);
// Nothing on the current screen is waiting for data: the DB's runs (and
// the watched runs' metrics) have arrived, and in the editor the validator
// has answered. Headless `--frames N` counts frames from then on.
bool workbench_settled(AppState& app);
// What is on screen, as JSON (for tests and bug reports): the open graph,
// its issues, the runs shown and selected, the dashboard's series, the
// compare view's tables, the launch state, the profile screen's state, and
// every recorded item's rect.
nlohmann::json dump_state(AppState& app);

}  // namespace rlwb::ui
