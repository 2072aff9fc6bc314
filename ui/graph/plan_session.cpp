#include "ui/graph/plan_session.h"

#include <filesystem>

#include "core/planner/device_profile.h"
#include "core/planner/plan_report.h"
#include "core/planner/plan_writer.h"
#include "core/planner/valid_plans.h"

namespace rlwb::ui {

namespace planner = core::planner;

std::vector<std::string> plan_profile_choices() {
  std::vector<std::string> names = planner::builtin_device_profile_names();
  if (std::filesystem::exists(planner::this_host_profile_path())) names.push_back(planner::kThisHostProfile);
  return names;
}

std::string default_plan_profile() {
  if (std::filesystem::exists(planner::this_host_profile_path())) return planner::kThisHostProfile;
  const auto names = planner::builtin_device_profile_names();
  return names.empty() ? "" : names.front();
}

namespace {

// Why the request cannot be searched, or "".
std::string request_problem(const PlanRequest& r) {
  if (r.devices < 1) return "devices: give at least 1 device to plan for";
  if (r.nodes < 0) return "nodes: give 0 (from the profile) or the number of nodes";
  if (r.max_pp < 1) return "max pp: give at least 1";
  if (r.profile.empty()) return "device profile: choose one";
  return "";
}

}  // namespace

void search_plans_for(PlanSession& session, const GraphDocument& doc, const core::MethodCatalog& catalog,
                      const planner::TokenizerVocab& vocab) {
  session.search = {};
  session.input = {};
  session.summary.clear();
  session.error.clear();
  session.note.clear();
  session.selected = -1;
  session.versions.clear();
  const PlanRequest& r = session.request;
  if (!doc.loaded()) {
    session.error = doc.path() + " could not be loaded; fix the problems it lists, then plan";
    return;
  }
  if (!vocab) {
    session.error = "this program cannot read model shapes (no tokenizers); plan with 'rlwb plan'";
    return;
  }
  if (std::string problem = request_problem(r); !problem.empty()) {
    session.error = problem;
    return;
  }
  // Synchronous, on the frame: the search takes 0.01-0.02 s even for 128
  // devices (docs/planner.md), the validation of its candidates a few ms
  // each for the shipped experiments, so a click costs a frame or two
  // rather than a thread and a "searching..." state to draw and test.
  try {
    const planner::DeviceProfile profile = planner::load_device_profile(r.profile);
    const core::Experiment& exp = doc.experiment();
    session.input = planner::plan_input_of(exp, vocab);
    planner::PlanOptions options;
    options.devices = r.devices;
    options.nodes = r.nodes;
    options.max_pp = r.max_pp;
    options.generation_layouts = planner::plans_generation_layouts(profile);
    session.search = planner::search_valid_plans(exp, session.input, profile, options, catalog, r.top);
    session.summary = planner::search_summary(session.input, session.search, profile, r.devices);
    session.profile = profile.name;
    session.pool_device = planner::pool_device_of(profile);
    session.devices = r.devices;
    session.selected = 0;
    session.versions = {doc.version()};
  } catch (const std::exception& e) {
    session.search = {};
    session.error = e.what();
  }
}

bool plans_are_current(const PlanSession& session, const GraphDocument& doc) {
  return session.versions.count(doc.version()) > 0;
}

bool apply_selected_plan(PlanSession& session, GraphDocument& doc) {
  session.note.clear();
  // A field still being typed into ends its own undo entry first (and
  // then counts as a change since the search).
  if (doc.in_gesture()) doc.end_gesture();
  if (session.selected < 0 || session.selected >= static_cast<int>(session.search.plans.size())) {
    session.error = "select a plan to apply (Search lists them)";
    return false;
  }
  if (!plans_are_current(session, doc)) {
    session.error = "the experiment changed since these plans were searched; Search again";
    return false;
  }
  session.error.clear();
  const planner::Plan& plan = session.search.plans[session.selected];
  const std::string rank = "#" + std::to_string(session.selected + 1);
  doc.begin_gesture();
  doc.experiment() = planner::apply_plan(doc.experiment(), session.input, plan, session.pool_device);
  const bool changed = doc.end_gesture();
  session.versions.insert(doc.version());
  session.note = changed ? "applied plan " + rank + ": " + std::to_string(plan.sets.size()) +
                               " pool(s) and every model's layout (Undo puts them back)"
                         : "the experiment already has plan " + rank + "'s pools and layouts";
  return changed;
}

nlohmann::json plan_session_json(const PlanSession& session, const GraphDocument& doc) {
  const PlanRequest& r = session.request;
  nlohmann::json plans = nlohmann::json::array();
  for (const auto& plan : session.search.plans) plans.push_back(planner::plan_json(session.input, plan));
  return {
      {"open", session.open},
      {"request", {{"devices", r.devices}, {"nodes", r.nodes}, {"profile", r.profile}, {"max_pp", r.max_pp}}},
      {"profiles", plan_profile_choices()},
      {"error", session.error},
      {"note", session.note},
      {"summary", session.summary},
      {"profile", session.profile},
      {"pool_device", session.pool_device},
      {"selected", session.selected},
      {"current", plans_are_current(session, doc)},
      {"plans", plans}};
}

}  // namespace rlwb::ui
