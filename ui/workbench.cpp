// [SECTION] The workbench: tabs for the screens, requests between them,
// and the state dump.
#include "ui/workbench.h"
#include "core/validate/validator.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include "imgui.h"
#include "ui/graph/node_geometry.h"
#include "ui/graph/phase_graphs.h"
#include "ui/graph/phase_groups.h"
#include "ui/platform/item_registry.h"
#include "ui/platform/layer_cache.h"

namespace rlwb::ui {
namespace {

const Screen kScreens[] = {Screen::editor,  Screen::runs,   Screen::dashboard,
                           Screen::compare, Screen::launch, Screen::profile};

const char* tab_label(Screen s) {
  switch (s) {
    case Screen::editor:
      return "Editor";
    case Screen::runs:
      return "Runs";
    case Screen::dashboard:
      return "Dashboard";
    case Screen::compare:
      return "Compare";
    case Screen::launch:
      return "Launch";
    case Screen::profile:
      return "Profile";
  }
  return "?";
}

void go_to(AppState& app, Screen s) {
  app.screen = s;
  app.switch_screen = true;
}

// Where a run's experiment is written to be opened: beside the DB, in
// reopened/run-<id>.yaml; a file there with other content (edited since)
// is kept, and the next free name (run-<id>-2.yaml, ...) is used.
std::string reopened_path(const std::string& db, int64_t run, const std::string& text) {
  const auto dir = std::filesystem::path(db).parent_path() / "reopened";
  std::filesystem::create_directories(dir);
  for (int i = 1;; ++i) {
    const auto path =
        dir / ("run-" + std::to_string(run) + (i > 1 ? "-" + std::to_string(i) : std::string()) + ".yaml");
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::ofstream(path, std::ios::binary) << text;
      return path.string();
    }
    const std::string there((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (there == text) return path.string();
  }
}

// "Open in editor" on a run: the experiment exactly as it ran (the resolved
// text the run stored), in the editor, remembered as that run's.
void open_run_in_editor(AppState& app, int64_t run) {
  const RunData* view = app.store.run(run);
  if (!view || view->info.experiment_text.empty()) {
    app.editor.status = "run " + std::to_string(run) + " stored no experiment text";
    go_to(app, Screen::editor);
    return;
  }
  try {
    request_open(app.editor, reopened_path(app.store.db_path(), run, view->info.experiment_text), run);
  } catch (const std::exception& e) {
    app.editor.status = "cannot write run " + std::to_string(run) + "'s experiment: " + e.what();
  }
  go_to(app, Screen::editor);
}

void handle_requests(AppState& app, ViewRequests& r) {
  if (r.open_in_editor) open_run_in_editor(app, r.open_in_editor);
  if (app.editor.pending_quit && app.screen != Screen::editor) go_to(app, Screen::editor);
  if (r.open_dashboard) {
    if (app.dashboard.run != r.open_dashboard) {
      app.dashboard = DashboardState{};
      app.dashboard.run = r.open_dashboard;
    }
    go_to(app, Screen::dashboard);
  }
  if (r.open_profile) {
    if (app.profile.run != r.open_profile) {
      app.profile.run = r.open_profile;
      if (app.profile.diff_run == r.open_profile) app.profile.diff_run = 0;
    }
    go_to(app, Screen::profile);
  }
  if (!r.compare.empty()) {
    app.compare = CompareState{};
    app.compare.runs = r.compare;
    go_to(app, Screen::compare);
  }
  if (app.editor.wants_run) {
    app.editor.wants_run = false;
    go_to(app, Screen::launch);
  }
}

// The screens that follow runs say when the DB cannot be read (the runs
// table has it in its status line); the poller keeps retrying.
void draw_db_error(const RunStore& store) {
  const std::string error = store.error();
  if (error.empty()) return;
  ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s", error.c_str());
  items().record_last_item("db_error");
}

}  // namespace

const char* screen_name(Screen screen) {
  switch (screen) {
    case Screen::editor:
      return "editor";
    case Screen::runs:
      return "runs";
    case Screen::dashboard:
      return "dashboard";
    case Screen::compare:
      return "compare";
    case Screen::launch:
      return "launch";
    case Screen::profile:
      return "profile";
  }
  return "?";
}

bool parse_screen(const std::string& name, Screen& out) {
  for (Screen s : kScreens)
    if (name == screen_name(s)) {
      out = s;
      return true;
    }
  return false;
}

void init_workbench(AppState& app, const WorkbenchOptions& o) {
  app.store.open(o.db, o.poll_ms);
  app.profiles.open(o.db);
  app.launch.cli = o.cli;
  app.editor.templates_dir = o.templates;
  app.editor.tokenizer_vocab = o.tokenizer_vocab;
  app.launch.log_dir = (std::filesystem::path(o.db).parent_path() / "logs" / "gui").string();
  if (!o.catalog.empty()) {
    try {
      std::ifstream in(o.catalog);
      std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      app.editor.catalog = std::make_shared<const core::MethodCatalog>(catalog_from_json(text));
    } catch (const std::exception& e) {
      app.message = "catalog " + o.catalog + " not loaded: " + e.what();
    }
  } else if (o.build_catalog) {
    app.editor.catalog = o.build_catalog;
  }
  app.screen = Screen::runs;
  if (!o.open_file.empty()) {
    open_graph(app.editor, o.open_file);
    app.screen = Screen::editor;
  }
  if (o.dashboard_run) {
    app.dashboard.run = o.dashboard_run;
    app.screen = Screen::dashboard;
  }
  if (!o.compare.empty()) {
    app.compare.runs = o.compare;
    app.screen = Screen::compare;
  }
  if (!o.screen.empty()) parse_screen(o.screen, app.screen);
  if (app.screen == Screen::profile) app.profile.run = o.dashboard_run;
  app.switch_screen = true;
}

bool workbench_settled(AppState& app) {
  if (!app.store.settled()) return false;
  if (app.screen == Screen::editor && app.editor.doc && app.editor.doc->loaded())
    return app.editor.validator.settled();
  if (app.screen == Screen::profile) return profile_settled(app.profiles, app.profile);
  return true;
}

void draw_workbench(AppState& app) {
  app.store.update();
  std::set<int64_t> watched(app.compare.runs.begin(), app.compare.runs.end());
  if (app.dashboard.run) watched.insert(app.dashboard.run);
  if (app.launch.run_id) watched.insert(app.launch.run_id);
  app.store.watch(watched);
  update_launch(app.launch, app.store);
  app.profiles.update();
  app.profiles.want(profile_runs_wanted(app.profile));
  app.runs.profiled = app.profiles.profiled_runs();

  const ImGuiViewport* viewport = ImGui::GetMainViewport();
  ImGui::SetNextWindowPos(viewport->WorkPos);
  ImGui::SetNextWindowSize(viewport->WorkSize);
  // No background: the frame loop's clear paints it in the same colour,
  // which saves a software rasterizer blending a window-sized quad a frame.
  ImGui::Begin("RLWB", nullptr,
               ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoBringToFrontOnFocus | ImGuiWindowFlags_NoSavedSettings |
                   ImGuiWindowFlags_NoBackground);
  if (!app.message.empty()) ImGui::TextColored(ImVec4(1, 0.75f, 0.3f, 1), "%s", app.message.c_str());
  ViewRequests requests;
  if (ImGui::BeginTabBar("screens")) {
    for (Screen s : kScreens) {
      ImGuiTabItemFlags flags = app.switch_screen && app.screen == s ? ImGuiTabItemFlags_SetSelected : 0;
      bool open = ImGui::BeginTabItem(tab_label(s), nullptr, flags);
      items().record_last_item(std::string("tab/") + tab_label(s));
      if (!open) continue;
      if (!app.switch_screen) app.screen = s;
      switch (s) {
        case Screen::editor:
          draw_graph_editor(app.editor);
          break;
        case Screen::runs:
          draw_runs_table(app.store, app.runs, requests);
          break;
        case Screen::dashboard:
          draw_db_error(app.store);
          draw_dashboard(app.store, app.dashboard);
          break;
        case Screen::compare:
          draw_db_error(app.store);
          draw_compare(app.store, app.compare);
          break;
        case Screen::launch:
          draw_launch(app.launch, app.editor, app.store, requests);
          break;
        case Screen::profile:
          draw_db_error(app.store);
          draw_profile_screen(app.profiles, app.store, app.profile);
          break;
      }
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
  app.switch_screen = false;
  draw_unsaved_dialog(app.editor);
  ImGui::End();
  handle_requests(app, requests);
}

nlohmann::json dump_state(AppState& app) {
  using nlohmann::json;
  json out;
  out["screen"] = screen_name(app.screen);
  out["layers"] = {{"redrawn", layer_stats().redrawn}, {"reused", layer_stats().reused}};
  json editor;
  if (const GraphDocument* doc = app.editor.doc.get()) {
    editor["file"] = doc->path();
    editor["loaded"] = doc->loaded();
    editor["dirty"] = doc->dirty();
    editor["can_undo"] = doc->can_undo();
    editor["can_redo"] = doc->can_redo();
    editor["origin_run"] = app.editor.origin_run;
    json load_issues = json::array();
    for (const auto& i : doc->load_issues()) load_issues.push_back(i.to_string());
    editor["load_issues"] = load_issues;
    // Every graph's nodes: the step's ("phase": ""), then each trainer phase's.
    json nodes = json::array();
    for (const auto& phase : graphs_with_nodes(doc->experiment()))
      for (const auto& n : graph_nodes(doc->experiment(), phase)) {
        json node = node_json(*doc, n, phase);
        const Vec2 size = node_size(doc->experiment(), n);  // the box, in canvas units
        node["w"] = size.x;
        node["h"] = size.y;
        node["origin"] = phase.empty() ? doc->node_origin(n) : "";  // "" unless inherited (defaults:)
        nodes.push_back(node);
      }
    editor["nodes"] = nodes;
    // The trainer phases' groups (phase_groups.h), each frame in canvas units.
    json groups = json::array();
    for (const PhaseGroup& g : phase_groups(doc->experiment(), doc->positions()))
      groups.push_back({{"phase", g.phase},
                        {"title", g.title},
                        {"has_nodes", g.has_nodes},
                        {"summary", g.summary},
                        {"x", g.frame.min.x},
                        {"y", g.frame.min.y},
                        {"w", g.frame.max.x - g.frame.min.x},
                        {"h", g.frame.max.y - g.frame.min.y}});
    editor["groups"] = groups;
    json issues = json::array();
    for (const auto& i : app.editor.issues)
      issues.push_back({{"node", i.node},
                        {"line", i.line},
                        {"message", i.message},
                        {"hint", i.hint},
                        {"phase", i.phase},
                        {"severity", i.severity == core::Severity::error ? "error" : "warning"}});
    editor["issues"] = issues;
    // Where each model runs: what the Plan panel writes.
    json pools = json::object(), models = json::object();
    for (const auto& [name, pool] : doc->experiment().pools)
      pools[name] = {{"workers", pool.workers}, {"device", pool.device}};
    for (const auto& [name, model] : doc->experiment().models)
      models[name] = {{"pool", model.pool},
                      {"dp", model.parallel.dp},
                      {"tp", model.parallel.tp},
                      {"pp", model.parallel.pp}};
    editor["pools"] = pools;
    editor["models"] = models;
    editor["plan"] = plan_session_json(app.editor.plan, *doc);
    editor["issues_current"] = app.editor.issues_version == doc->version();
    const char* states[] = {"idle", "checking", "done"};
    editor["validator"] = states[static_cast<int>(app.editor.validator.state())];
  }
  editor["selected"] = app.editor.selected;
  editor["inspected_phase"] = app.editor.inspected_phase;
  editor["status"] = app.editor.status;
  editor["zoom"] = app.editor.view.zoom;
  editor["offset"] = {app.editor.view.offset.x, app.editor.view.offset.y};
  // What waits for the "unsaved changes" dialog: "quit", "open PATH" or "".
  editor["pending"] = app.editor.pending_quit   ? "quit"
                      : app.editor.pending_open ? "open " + app.editor.pending_open->first
                                                : std::string();
  out["editor"] = editor;

  out["runs"] = {{"db", app.store.db_path()},     {"error", app.store.error()}, {"visible", app.runs.visible},
                 {"selected", app.runs.selected}, {"status", app.runs.status},  {"all", app.store.run_ids()}};
  json names = json::object();
  for (int64_t id : app.store.run_ids())
    if (const RunData* r = app.store.run(id))
      names[std::to_string(id)] = {{"name", r->info.name}, {"status", r->info.status}, {"tags", r->tags}};
  out["runs"]["info"] = names;

  json dash = {{"run", app.dashboard.run}};
  if (RunData* r = app.dashboard.run ? app.store.run(app.dashboard.run) : nullptr) {
    dash["status"] = r->info.status;
    json metrics = json::object();
    for (const auto& [k, s] : r->metrics) metrics[k] = s.value.size();
    dash["metrics"] = metrics;
    dash["events"] = r->events.size();
    json event_texts = json::array();
    for (const auto& e : r->events) event_texts.push_back(e.text);
    dash["event_texts"] = event_texts;
    dash["points"] = r->points;
  }
  json views = json::object();
  for (const auto& [key, view] : app.dashboard.plots)
    views[key] = {
        {"x0", view.x0}, {"x1", view.x1}, {"y0", view.y0}, {"y1", view.y1}, {"auto_fit", view.auto_fit}};
  dash["views"] = views;
  dash["shown"] = app.dashboard.shown;
  out["dashboard"] = dash;

  json diff = json::array();
  for (const auto& row : app.compare.diff.rows) {
    json values = json::array();
    for (const auto& v : row.values) values.push_back(v ? json(*v) : json());
    diff.push_back({{"key", row.key}, {"values", values}, {"differs", row.differs}});
  }
  json summary = json::array();
  for (const auto& s : app.compare.summary)
    summary.push_back({{"run", s.run},
                       {"metric", s.metric},
                       {"count", s.count},
                       {"last", s.last_step ? json(s.last) : json()},
                       {"best", s.best_step ? json(s.best) : json()}});
  out["compare"] = {{"runs", app.compare.runs},
                    {"shown", app.compare.shown},
                    {"diff", diff},
                    {"layout_keys", app.compare.layout_keys},
                    {"hidden_layout_keys", app.compare.diff.hidden_layout_keys},
                    {"summary", summary},
                    {"group_by", app.compare.group_by}};

  json launch = {
      {"status", app.launch.status}, {"run_id", app.launch.run_id}, {"argv", app.launch.last_argv}};
  if (app.launch.target) {
    launch["target"] = app.launch.target->name();
    launch["state"] = app.launch.target->state();
    launch["exit_code"] = app.launch.target->exit_code();
    launch["active"] = app.launch.target->active();
  }
  out["launch"] = launch;
  out["profile"] = profile_state_json(app.profiles, app.profile);

  json rects = json::object();
  for (const auto& [id, r] : items().this_frame()) rects[id] = {r.min.x, r.min.y, r.max.x, r.max.y};
  out["items"] = rects;
  return out;
}

}  // namespace rlwb::ui
