// [SECTION] The launch screen.
#include "ui/launch/launch_view.h"

#include <algorithm>
#include <filesystem>

#include "core/tracking/time_now.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/graph/validator_client.h"
#include "ui/platform/item_registry.h"

namespace rlwb::ui {
namespace {

// The errors of the document as it would run, or "" when it has none.
// Checked here, in-process, so that an experiment that no longer validates
// (a run's, reopened after RLWB changed) says why before anything starts.
std::string launch_errors(const GraphEditor& editor) {
  const auto catalog = validation_catalog(editor);
  if (!catalog) return "";
  std::string first;
  int errors = 0;
  for (const core::GraphIssue& issue :
       validate_text(editor.doc->text_to_save(), editor.doc->path(), *catalog))
    if (issue.severity == core::Severity::error && errors++ == 0) first = issue.to_string();
  if (errors == 0) return "";
  return std::to_string(errors) + " error(s) in the graph; the first: " + first +
         " (the Editor's Problems list has them all)";
}

void start_run(LaunchState& state, GraphEditor& editor, RunStore& store) {
  if (!editor.doc || !editor.doc->loaded()) {
    state.status = "open a graph file that loads in the Editor first";
    return;
  }
  if (const std::string errors = launch_errors(editor); !errors.empty()) {
    state.status = "not started: " + errors;
    return;
  }
  if (editor.doc->dirty()) {
    try {
      editor.doc->save();
      state.status = "saved " + editor.doc->path() + " before running; ";
    } catch (const std::exception& e) {
      state.status = std::string("not started: ") + e.what();
      return;
    }
  } else {
    state.status.clear();
  }
  try {
    if (!state.target || state.target->name() != state.target_name)
      state.target = make_launch_target(state.target_name, state.log_dir);
    LaunchRequest request;
    request.cli = state.cli;
    request.experiment_file = editor.doc->path();
    request.overrides = split_overrides(state.overrides_text);
    request.db = store.db_path();
    request.name = state.run_name;
    request.from_run = editor.origin_run;  // a run's experiment, opened from the Runs screen
    if (state.target_name == "remote") request.remote = state.remote;
    const auto ids = store.run_ids();
    state.newest_run_at_launch = ids.empty() ? 0 : *std::max_element(ids.begin(), ids.end());
    state.last_argv = launch_argv(request);
    state.target->start(request);
    state.launched_pid = state.target->controller_pid();
    state.launched_at = core::unix_time_now();
    state.run_id = 0;
    state.status += "started";
    store.refresh();
  } catch (const std::exception& e) {
    state.status += std::string("not started: ") + e.what();
  }
}

// The SSH host and where rlwb lives there (`rlwb run --remote`).
void draw_remote_fields(core::RemoteHost& remote) {
  ImGui::SetNextItemWidth(240);
  ImGui::InputTextWithHint("ssh host", "a Host of your ssh config, or user@host", &remote.host);
  items().record_last_item("launch/remote/host");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(240);
  ImGui::InputTextWithHint("ssh config", "(~/.ssh/config)", &remote.ssh_config);
  items().record_last_item("launch/remote/ssh_config");
  ImGui::SetNextItemWidth(240);
  ImGui::InputText("folder there", &remote.dir);
  items().record_last_item("launch/remote/dir");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(240);
  ImGui::InputText("rlwb there", &remote.rlwb);
  items().record_last_item("launch/remote/rlwb");
}

}  // namespace

void update_launch(LaunchState& state, RunStore& store) {
  if (!state.target) return;
  state.target->poll();
  // The run this launch created: same controller pid, started after the
  // click; for a remote launch, the newer run that mirrors one of its host
  // (its pid and clock are the host's).
  if (state.run_id == 0 && state.launched_pid)
    for (int64_t id : store.run_ids()) {
      const RunData* r = store.run(id);
      if (!r) continue;
      if (state.target->name() == "remote") {
        if (id > state.newest_run_at_launch &&
            std::find(r->tags.begin(), r->tags.end(),
                      std::pair<std::string, std::string>("remote.host", state.remote.host)) != r->tags.end())
          state.run_id = id;
      } else if (r->info.pid == state.launched_pid && r->info.start_time >= state.launched_at - 5) {
        state.run_id = id;
      }
    }
}

void draw_launch(LaunchState& state, GraphEditor& editor, RunStore& store, ViewRequests& requests) {
  ImGui::TextDisabled("experiment");
  ImGui::SameLine();
  ImGui::TextUnformatted(editor.doc ? editor.doc->path().c_str() : "(none open: use the Editor tab)");
  ImGui::SetNextItemWidth(140);
  const bool open = ImGui::BeginCombo("launch target", state.target_name.c_str());
  items().record_last_item("launch/target");
  if (open) {
    for (const auto& name : launch_target_names()) {
      if (ImGui::Selectable(name.c_str(), name == state.target_name)) state.target_name = name;
      items().record_last_item("launch/target/" + name);
    }
    ImGui::EndCombo();
  }
  ImGui::SameLine();
  ImGui::TextDisabled("db: %s", store.db_path().c_str());
  if (state.target_name == "remote") draw_remote_fields(state.remote);
  ImGui::SetNextItemWidth(520);
  ImGui::InputTextWithHint("overrides", "trainer.steps=50 task.batch_size=4", &state.overrides_text);
  items().record_last_item("launch/overrides");
  ImGui::SetNextItemWidth(240);
  ImGui::InputTextWithHint("run name", "(the experiment's name)", &state.run_name);
  const bool active = state.target && state.target->active();
  ImGui::BeginDisabled(active || !editor.doc || !editor.doc->loaded());
  if (recorded_button("Start run")) start_run(state, editor, store);
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(!active);
  if (recorded_button("Stop")) state.target->stop(), state.status = "asked the controller to stop";
  ImGui::SameLine();
  if (recorded_button("Kill")) state.target->kill(), state.status = "killed the controller";
  ImGui::EndDisabled();
  ImGui::SameLine();
  ImGui::BeginDisabled(state.run_id == 0);
  if (recorded_button("Open dashboard")) requests.open_dashboard = state.run_id;
  ImGui::EndDisabled();
  if (!state.status.empty()) ImGui::TextDisabled("%s", state.status.c_str());
  if (!state.last_argv.empty()) {
    std::string line;
    for (const auto& a : state.last_argv) line += (line.empty() ? "" : " ") + a;
    ImGui::TextDisabled("$ %s", line.c_str());
  }
  if (!state.target) return;

  ImGui::Separator();
  ImGui::Text("controller: %s", state.target->state().c_str());
  items().record_last_item("launch/state");
  items().record_last_item(state.target->active() ? "launch/controller/active" : "launch/controller/ended");
  if (state.target->controller_pid()) {
    ImGui::SameLine();
    ImGui::TextDisabled("pid %d", static_cast<int>(state.target->controller_pid()));
  }
  if (const RunData* run = state.run_id ? store.run(state.run_id) : nullptr) {
    ImGui::Text("run #%lld %s: %s, step %lld", static_cast<long long>(run->info.id), run->info.name.c_str(),
                run->info.status.c_str(), static_cast<long long>(run->info.last_step));
    items().record_last_item("launch/run/" + run->info.status);
    items().record_last_item("launch/run");
    if (run->info.last_step >= 1) items().record_last_item("launch/run/stepping");
    for (auto it = run->events.rbegin(); it != run->events.rend(); ++it)
      if (it->level == "error") {
        ImGui::TextColored(ImVec4(1, 0.45f, 0.4f, 1), "error: %s", it->text.c_str());
        break;
      }
  } else if (state.target->active()) {
    ImGui::TextDisabled("waiting for the run to appear in the tracking DB...");
  }

  if (core::unix_time_now() - state.workers_at > 0.5) {
    std::string worker_logs = state.run_id ? "runs/logs/run-" + std::to_string(state.run_id) : "";
    state.workers = state.target->workers(worker_logs);
    state.workers_at = core::unix_time_now();
  }
  const auto& workers = state.workers;
  if (state.target->name() == "remote")
    ImGui::Text("worker processes: on %s (their logs are there)", state.remote.host.c_str());
  else
    ImGui::Text("worker processes: %zu", workers.size());
  if (!workers.empty() && ImGui::BeginTable("workers", 6,
                                            ImGuiTableFlags_RowBg | ImGuiTableFlags_Borders |
                                                ImGuiTableFlags_SizingStretchProp)) {
    for (const char* h : {"group", "rank", "pid", "state", "cpu s", "log written"})
      ImGui::TableSetupColumn(h);
    ImGui::TableHeadersRow();
    for (const WorkerProcess& w : workers) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(w.group.c_str());
      items().record_last_item("launch/worker/" + w.group + "/" + std::to_string(w.rank));
      ImGui::TableNextColumn();
      ImGui::Text("%d", w.rank);
      ImGui::TableNextColumn();
      ImGui::Text("%d", static_cast<int>(w.pid));
      ImGui::TableNextColumn();
      ImGui::Text("%c", w.state);
      ImGui::TableNextColumn();
      ImGui::Text("%.1f", w.cpu_seconds);
      ImGui::TableNextColumn();
      if (w.log_age_seconds >= 0)
        ImGui::Text("%.0fs ago", w.log_age_seconds);
      else
        ImGui::TextDisabled("-");
    }
    ImGui::EndTable();
  }
  ImGui::TextDisabled("controller output");
  ImGui::BeginChild("log_tail", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  std::string tail = state.target->log_tail(16000);
  ImGui::TextUnformatted(tail.c_str());
  if (ImGui::GetScrollY() >= ImGui::GetScrollMaxY() - 20) ImGui::SetScrollHereY(1.0f);
  ImGui::EndChild();
}

}  // namespace rlwb::ui
