// The Profile screen: one run's stored profile (docs/profiler.md) as an
// icicle of its calling contexts -- per dataflow node (the first-level
// frames) and per worker, with search, zoom and hover -- or as one step's
// timeline (nodes as lanes, ranks as sub-lanes, the critical path marked,
// each pool's idle time); optionally coloured by the change against a
// second profiled run; the analyzer's findings beside it. A run that
// cannot be shown says why in the CLI's words (ProfileError). The state is
// a plain struct owned by the app; the data comes from ProfileLoader
// (profile_loader.h), never read on the UI thread.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "ui/profile/icicle_diff.h"
#include "ui/profile/icicle_layout.h"
#include "ui/profile/icicle_view.h"
#include "ui/profile/profile_loader.h"
#include "ui/runs/run_store.h"

namespace rlwb::ui {

struct ProfileState {
  enum class View { icicle, timeline };

  int64_t run = 0;       // run A, the run shown
  int64_t diff_run = 0;  // run B; 0: colour by frame kind
  View view = View::icicle;
  std::string worker;              // "" every worker; a pool ("train") or a worker ("train/1")
  std::vector<std::string> focus;  // the zoom: names from the node down; focus[0] is the node shown
  std::string search;
  int64_t step = 0;  // the timeline's step; 0: the first profiled step

  // Derived from the loaded profile, rebuilt when it or the worker changes.
  struct Cache {
    uint64_t version = 0;  // LoadedProfile::version of run A
    std::string worker;
    core::profile::ContextTree tree;
    std::vector<std::string> nodes, workers;  // the choices offered
    int64_t steps = 1;                        // profiled_step_count
    uint64_t diff_version = 0;                // of run B
    std::optional<IcicleDiff> diff;
    std::vector<std::string> layout_focus;  // what `layout` was laid out for
    float layout_width = 0;
    std::optional<IcicleLayout> layout;
    std::string last_status;  // run A's status when it was read (a finished run is read again)
  } cache;

  // What the last frame showed (the state dump reads these).
  std::optional<HoveredFrame> hovered;
  std::optional<std::string> hovered_bar;  // the timeline's
  SearchHits hits;
  int boxes_drawn = 0;
  std::vector<std::string> critical_path;
  std::vector<std::string> lanes;
  nlohmann::json idle = nlohmann::json::object();  // pool -> idle seconds in the step shown
  std::string message;                             // why nothing is drawn ("" when a profile is)
};

// Which runs the screen needs read (run A and B).
std::set<int64_t> profile_runs_wanted(const ProfileState& state);
void draw_profile_screen(ProfileLoader& loader, RunStore& store, ProfileState& state);
// The screen's data has arrived (for headless --frames).
bool profile_settled(const ProfileLoader& loader, const ProfileState& state);
// What is on the screen: run, node, worker, zoom, search hits, diff run,
// timeline step and its critical path, findings, the hovered frame.
nlohmann::json profile_state_json(const ProfileLoader& loader, const ProfileState& state);

}  // namespace rlwb::ui
