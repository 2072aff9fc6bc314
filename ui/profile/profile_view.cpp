// [SECTION] The Profile screen: toolbar, icicle or step timeline, findings.
#include "ui/profile/profile_view.h"

#include <algorithm>
#include <set>

#include "core/profile/context_paths.h"
#include "core/profile/profile_units.h"
#include "imgui.h"
#include "imgui_stdlib.h"
#include "ui/platform/item_registry.h"
#include "ui/profile/findings_panel.h"
#include "ui/profile/step_timeline_view.h"
#include "ui/runs/runs_views.h"

namespace rlwb::ui {

namespace profile = core::profile;

namespace {

const ImVec4 kWarning(1, 0.75f, 0.3f, 1);

std::string run_title(RunStore& store, int64_t run) {
  if (const RunData* r = store.run(run)) return run_label(*r);
  return "#" + std::to_string(run);
}

std::string joined(const std::vector<std::string>& names, const char* separator) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : separator) + n;
  return out;
}

// The tree, the choices and the per-step divisor for run A and the worker
// filter; everything laid out on them is dropped with them.
void rebuild_cache(ProfileState& s, const LoadedProfile& a) {
  ProfileState::Cache& c = s.cache;
  if (c.version == a.version && c.worker == s.worker) return;
  c.version = a.version;
  c.worker = s.worker;
  c.tree = s.worker.empty() ? a.profile->merged_tree() : profile::filtered_tree(*a.profile, s.worker);
  c.nodes.clear();
  for (const auto& child : c.tree.root().children) c.nodes.push_back(child->name);
  std::set<std::string> pools, workers;
  for (const profile::WorkerWindow& w : a.profile->workers) {
    workers.insert(w.worker);
    pools.insert(w.worker.substr(0, w.worker.find('/')));
  }
  c.workers.assign(pools.begin(), pools.end());
  for (const std::string& w : workers)
    if (!pools.count(w)) c.workers.push_back(w);
  c.steps = std::max<int64_t>(1, profile::profiled_step_count(*a.profile));
  c.layout.reset();
  c.diff.reset();
  c.diff_version = 0;
}

void update_diff(ProfileState& s, const ProfileLoader& loader, const LoadedProfile& a) {
  const LoadedProfile* b = s.diff_run ? loader.get(s.diff_run) : nullptr;
  if (!b || !b->profile) {
    s.cache.diff.reset();
    s.cache.diff_version = 0;
    return;
  }
  if (s.cache.diff && s.cache.diff_version == b->version && s.cache.diff->run_b() == s.diff_run) return;
  s.cache.diff.emplace(*a.profile, *b->profile, s.worker);
  s.cache.diff_version = b->version;
}

// A combo whose button is `profile/<id>` and whose entries are
// `profile/<id>/<entry id>`; returns the index picked, or -1.
int recorded_combo(const char* label, const std::string& id, const std::string& preview,
                   const std::vector<std::pair<std::string, std::string>>& entries, float width) {
  int picked = -1;
  ImGui::SetNextItemWidth(width);
  const bool open = ImGui::BeginCombo(label, preview.c_str());
  items().record_last_item("profile/" + id);
  if (!open) return -1;
  for (size_t i = 0; i < entries.size(); ++i) {
    if (ImGui::Selectable(entries[i].second.c_str(), entries[i].second == preview))
      picked = static_cast<int>(i);
    items().record_last_item("profile/" + id + "/" + entries[i].first);
  }
  ImGui::EndCombo();
  return picked;
}

void draw_toolbar(ProfileLoader& loader, RunStore& store, ProfileState& s) {
  std::vector<std::pair<std::string, std::string>> runs;
  std::vector<int64_t> ids = loader.profiled_runs();
  if (s.run && !loader.is_profiled(s.run)) ids.push_back(s.run);
  std::sort(ids.rbegin(), ids.rend());
  for (int64_t id : ids) runs.push_back({std::to_string(id), run_title(store, id)});
  const int r =
      recorded_combo("run##profile", "run", s.run ? run_title(store, s.run) : "(pick a run)", runs, 260);
  if (r >= 0 && ids[r] != s.run) {
    s.run = ids[r];
    if (s.diff_run == s.run) s.diff_run = 0;
    s.hovered.reset();
  }
  ImGui::SameLine();
  if (recorded_button("Reload") && s.run) {
    loader.reload(s.run);
    if (s.diff_run) loader.reload(s.diff_run);
  }
  ImGui::SameLine(0, 24);
  int view = s.view == ProfileState::View::icicle ? 0 : 1;
  if (ImGui::RadioButton("Flame graph", view == 0)) s.view = ProfileState::View::icicle;
  items().record_last_item("profile/view/icicle");
  ImGui::SameLine();
  if (ImGui::RadioButton("Step timeline", view == 1)) s.view = ProfileState::View::timeline;
  items().record_last_item("profile/view/timeline");
  ImGui::SameLine(0, 24);
  std::vector<std::pair<std::string, std::string>> others{{"none", "none (colour by kind)"}};
  std::vector<int64_t> other_ids{0};
  for (int64_t id : loader.profiled_runs())
    if (id != s.run) others.push_back({std::to_string(id), run_title(store, id)}), other_ids.push_back(id);
  const int d =
      recorded_combo("diff against##profile", "diff",
                     s.diff_run ? run_title(store, s.diff_run) : others.front().second, others, 220);
  if (d >= 0) s.diff_run = other_ids[d];
}

void draw_legend(const ProfileState& s) {
  if (s.cache.diff) {
    const IcicleDiff& d = *s.cache.diff;
    ImGui::TextColored(ImVec4(0.9f, 0.3f, 0.25f, 1), "red: run A (#%lld) slower",
                       static_cast<long long>(d.run_a()));
    ImGui::SameLine();
    ImGui::TextColored(ImVec4(0.3f, 0.5f, 0.95f, 1), "blue: run A faster");
    ImGui::SameLine();
    ImGui::TextDisabled("grey: within %.0f%%  --  self time per step: run A %s, run B (#%lld) %s",
                        kUnchangedShare * 100, profile::format_seconds(d.total_a_s()).c_str(),
                        static_cast<long long>(d.run_b()), profile::format_seconds(d.total_b_s()).c_str());
    if (d.only_in_b()) {
      ImGui::SameLine();
      ImGui::TextDisabled("(%zu contexts only in run B, not drawn)", d.only_in_b());
    }
    items().record_last_item("profile/diff_legend");
    return;
  }
  const struct {
    const char* name;
    ImVec4 color;
  } kinds[] = {{"node", ImVec4(178 / 255.f, 146 / 255.f, 228 / 255.f, 1)},
               {"method", ImVec4(104 / 255.f, 196 / 255.f, 192 / 255.f, 1)},
               {"operator", ImVec4(238 / 255.f, 164 / 255.f, 84 / 255.f, 1)},
               {"native", ImVec4(156 / 255.f, 204 / 255.f, 112 / 255.f, 1)},
               {"kernel", ImVec4(236 / 255.f, 124 / 255.f, 124 / 255.f, 1)}};
  for (const auto& k : kinds) {
    ImGui::ColorButton(k.name, k.color, ImGuiColorEditFlags_NoTooltip, ImVec2(12, 12));
    ImGui::SameLine(0, 4);
    ImGui::TextUnformatted(k.name);
    ImGui::SameLine(0, 14);
  }
  ImGui::TextDisabled(
      "width: wall time, callers above callees; click: zoom in, right-click or Escape: zoom out");
}

void draw_icicle_panel(ProfileState& s, ImVec2 size) {
  ProfileState::Cache& c = s.cache;
  // Node and worker, search.
  std::vector<std::pair<std::string, std::string>> nodes{{"all", "all nodes"}};
  for (const std::string& n : c.nodes) nodes.push_back({n, n});
  const int n =
      recorded_combo("node##profile", "node", s.focus.empty() ? "all nodes" : s.focus.front(), nodes, 160);
  if (n == 0) s.focus.clear();
  if (n > 0) s.focus = {c.nodes[n - 1]};
  ImGui::SameLine();
  std::vector<std::pair<std::string, std::string>> workers{{"all", "all workers"}};
  for (const std::string& w : c.workers)
    workers.push_back({w, w.find('/') == std::string::npos ? "pool " + w : w});
  const int w = recorded_combo("worker##profile", "worker",
                               s.worker.empty()                          ? "all workers"
                               : s.worker.find('/') == std::string::npos ? "pool " + s.worker
                                                                         : s.worker,
                               workers, 160);
  if (w == 0) s.worker.clear();
  if (w > 0) s.worker = c.workers[w - 1];
  ImGui::SameLine();
  ImGui::SetNextItemWidth(220);
  ImGui::InputTextWithHint("##profile_search", "search frames (aten::mm)", &s.search);
  items().record_last_item("profile/search");
  if (!s.search.empty()) {
    ImGui::SameLine();
    ImGui::Text("%lld frames match, %s of the view", static_cast<long long>(s.hits.frames),
                profile::format_percent(s.hits.share).c_str());
    items().record_last_item("profile/hits");
  }
  // Escape zooms out, unless a text field has the keyboard.
  if (!s.focus.empty() && !ImGui::IsAnyItemActive() &&
      ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape)))
    s.focus.pop_back();

  // The breadcrumb: each step back out is a button.
  const float width = ImGui::GetContentRegionAvail().x - 2 * ImGui::GetStyle().WindowPadding.x;
  if (!c.layout || c.layout_focus != s.focus || c.layout_width != width) {
    c.layout = layout_icicle(c.tree, s.focus, 0.5 / std::max(1.0f, width));
    c.layout_focus = s.focus;
    c.layout_width = width;
  }
  s.focus = c.layout->focus_path;  // a zoom the tree no longer has is cut back
  c.layout_focus = s.focus;
  if (ImGui::SmallButton("all")) s.focus.clear();
  items().record_last_item("profile/crumb/all");
  for (size_t i = 0; i < c.layout->focus_path.size(); ++i) {
    ImGui::SameLine(0, 2);
    ImGui::TextDisabled(">");
    ImGui::SameLine(0, 2);
    ImGui::PushID(static_cast<int>(i));
    const std::string& name = c.layout->focus_path[i];
    if (ImGui::SmallButton(name.size() > 60 ? (name.substr(0, 57) + "...").c_str() : name.c_str()))
      s.focus.resize(i + 1);
    items().record_last_item("profile/crumb/" + std::to_string(i + 1));
    ImGui::PopID();
  }

  s.hits = search_frames(*c.layout, s.search);
  const float legend_h = ImGui::GetFrameHeightWithSpacing() + 4;
  IcicleInput in{&*c.layout, s.search, c.diff ? &*c.diff : nullptr, c.steps};
  const IcicleOutput out =
      draw_icicle(in, ImVec2(size.x, std::max(120.0f, ImGui::GetContentRegionAvail().y - legend_h)));
  s.hovered = out.hovered;
  s.boxes_drawn = out.boxes_drawn;
  if (out.zoom_to) s.focus = *out.zoom_to;
  if (out.zoom_out && !s.focus.empty()) s.focus.pop_back();
  draw_legend(s);
}

void draw_timeline_panel(ProfileState& s, const profile::RunProfile& p, ImVec2 size) {
  if (p.steps.empty()) {
    ImGui::TextColored(kWarning, "run %lld's profile has no step timings yet", static_cast<long long>(p.run));
    items().record_last_item("profile/message");
    return;
  }
  auto it = std::find_if(p.steps.begin(), p.steps.end(), [&](auto& st) { return st.step == s.step; });
  if (it == p.steps.end()) it = p.steps.begin(), s.step = it->step;
  std::vector<std::pair<std::string, std::string>> steps;
  for (const auto& st : p.steps)
    steps.push_back({std::to_string(st.step),
                     "step " + std::to_string(st.step) + " (" + profile::format_seconds(st.seconds) + ")"});
  const int picked = recorded_combo(
      "##profile_step", "step",
      "step " + std::to_string(it->step) + " (" + profile::format_seconds(it->seconds) + ")", steps, 180);
  if (picked >= 0) s.step = p.steps[picked].step, it = p.steps.begin() + picked;
  const StepTimelineLayout layout = layout_step_timeline(*it);
  ImGui::SameLine();
  ImGui::TextUnformatted("critical path:");
  ImGui::SameLine();
  ImGui::TextColored(ImVec4(1, 0.8f, 0.2f, 1), "%s",
                     layout.critical_path.empty() ? "-" : joined(layout.critical_path, " -> ").c_str());
  items().record_last_item("profile/critical_path");
  s.critical_path = layout.critical_path;
  s.lanes.clear();
  for (const NodeLane& lane : layout.lanes) s.lanes.push_back(lane.node);
  s.idle = nlohmann::json::object();
  for (const PoolActivity& pool : layout.pools) s.idle[pool.pool] = pool.idle_s;
  const float legend_h = ImGui::GetFrameHeightWithSpacing() + 4;
  const TimelineOutput out = draw_step_timeline(
      layout, ImVec2(size.x, std::max(120.0f, ImGui::GetContentRegionAvail().y - legend_h)));
  s.hovered_bar = out.hovered;
  ImGui::TextDisabled(
      "bars: dispatch to reply, compute solid; gold: on the critical path; hatched red: the pool idle");
}

}  // namespace

std::set<int64_t> profile_runs_wanted(const ProfileState& s) {
  std::set<int64_t> runs;
  if (s.run) runs.insert(s.run);
  if (s.diff_run) runs.insert(s.diff_run);
  return runs;
}

void draw_profile_screen(ProfileLoader& loader, RunStore& store, ProfileState& s) {
  draw_toolbar(loader, store, s);
  s.message.clear();
  s.hovered.reset();
  s.hovered_bar.reset();
  const LoadedProfile* a = s.run ? loader.get(s.run) : nullptr;
  if (!s.run) {
    s.message = loader.listed() && loader.profiled_runs().empty()
                    ? "No run in " + store.db_path() +
                          " has a profile: run one with `rlwb run FILE profile.enabled=true`"
                    : "Pick a run with a profile above, or select one on the Runs screen and press Profile.";
    if (!loader.list_error().empty()) s.message = loader.list_error();
  } else if (!a) {
    ImGui::TextDisabled("reading run %lld's profile...", static_cast<long long>(s.run));
    items().record_last_item("profile/loading");
    return;
  } else if (!a->profile) {
    s.message = a->error;
  }
  if (!s.message.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(kWarning, "%s", s.message.c_str());
    ImGui::PopTextWrapPos();
    items().record_last_item("profile/message");
    return;
  }
  rebuild_cache(s, *a);
  // A run read while it ran is read again once it has ended.
  const RunData* info = store.run(s.run);
  const std::string status = info ? info->info.status : "";
  if (s.cache.last_status == "running" && status != "running") loader.reload(s.run);
  s.cache.last_status = status;
  update_diff(s, loader, *a);
  if (s.diff_run && !s.cache.diff) {
    const LoadedProfile* b = loader.get(s.diff_run);
    ImGui::TextColored(kWarning, "%s", b ? b->error.c_str() : "reading the second run's profile...");
    items().record_last_item("profile/diff_message");
  }

  const float findings_w = std::clamp(ImGui::GetContentRegionAvail().x * 0.28f, 320.0f, 460.0f);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const ImVec2 main(avail.x - findings_w - ImGui::GetStyle().ItemSpacing.x, avail.y);
  ImGui::BeginChild("profile_main", main, false);
  if (s.view == ProfileState::View::icicle)
    draw_icicle_panel(s, ImVec2(ImGui::GetContentRegionAvail().x, 0));
  else
    draw_timeline_panel(s, *a->profile, ImVec2(ImGui::GetContentRegionAvail().x, 0));
  ImGui::EndChild();
  ImGui::SameLine();
  draw_findings_panel(a->findings, ImVec2(findings_w, avail.y));
}

bool profile_settled(const ProfileLoader& loader, const ProfileState& s) {
  if (!loader.settled()) return false;
  for (int64_t run : profile_runs_wanted(s))
    if (!loader.get(run)) return false;
  return true;
}

nlohmann::json profile_state_json(const ProfileLoader& loader, const ProfileState& s) {
  using nlohmann::json;
  json out = {{"run", s.run},
              {"diff_run", s.diff_run},
              {"view", s.view == ProfileState::View::icicle ? "icicle" : "timeline"},
              {"message", s.message},
              {"node", s.focus.empty() ? "all" : s.focus.front()},
              {"worker", s.worker.empty() ? "all" : s.worker},
              {"zoom", s.focus},
              {"zoom_path", joined(s.focus, "/")},
              {"search", s.search},
              {"hits", {{"frames", s.hits.frames}, {"share", s.hits.share}, {"paths", s.hits.paths}}},
              {"boxes", s.boxes_drawn},
              {"nodes", s.cache.nodes},
              {"workers", s.cache.workers},
              {"profiled_runs", loader.profiled_runs()}};
  const LoadedProfile* a = s.run ? loader.get(s.run) : nullptr;
  out["loading"] = s.run && !a;
  json findings = json::array();
  if (a)
    for (const auto& f : a->findings)
      findings.push_back({{"rule", f.rule}, {"title", f.title}, {"gain_s", f.gain_s}});
  out["findings"] = findings;
  out["timeline"] = {
      {"step", s.step}, {"critical_path", s.critical_path}, {"lanes", s.lanes}, {"idle", s.idle}};
  if (s.cache.diff)
    out["diff"] = {{"run_a", s.cache.diff->run_a()},
                   {"run_b", s.cache.diff->run_b()},
                   {"only_in_b", s.cache.diff->only_in_b()},
                   {"total_a_s", s.cache.diff->total_a_s()},
                   {"total_b_s", s.cache.diff->total_b_s()}};
  json hovered;
  if (s.hovered) {
    const HoveredFrame& h = *s.hovered;
    hovered = {{"path", h.path},
               {"name", h.name},
               {"kind", h.kind},
               {"calls", h.metrics.calls},
               {"wall_ns", h.metrics.wall_ns},
               {"self_ns", h.self_ns},
               {"cpu_ns", h.metrics.cpu_ns},
               {"bytes", h.bytes},
               {"shapes", h.shapes},
               {"lines", hovered_frame_lines(h)}};
    if (h.change)
      hovered["change"] = {{"a_s", h.change->a_s}, {"b_s", h.change->b_s}, {"shade", diff_shade(*h.change)}};
  }
  out["hovered"] = hovered;
  out["hovered_bar"] = s.hovered_bar ? json(*s.hovered_bar) : json();
  return out;
}

}  // namespace rlwb::ui
