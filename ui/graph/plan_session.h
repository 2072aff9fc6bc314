// The editor's Plan action without its drawing: what the panel asks for
// (devices, nodes, device profile, largest pp), the last search's ranked
// plans or the reason there are none, which plan is selected, and applying
// it to the open document. plan_panel.cpp draws it; tests drive it
// directly. The search is core/planner's, as `rlwb plan` runs it
// (search_valid_plans: only plans whose graph file validates).
//
// Contract:
// - search_plans_for() never throws: a bad setting, an experiment the
//   planner cannot read (a model without a transformer, say) or a device
//   count no plan fits ends in `error`, the message the planner gave, and
//   an empty list. The document is only read.
// - apply_selected_plan() writes the selected plan's pools and each model's
//   `parallel` into the document (apply_plan, plan_writer.h) as ONE
//   gesture: one undo entry that restores every pool and layout as it was.
// - Plans belong to the experiment they were searched for. Applying one
//   is refused once the document changed otherwise (an edit, another undo
//   step); the document states the plans themselves produced (applied,
//   undone back to the searched state, redone) still count as theirs, so
//   plans can be applied one after another to compare them.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "core/planner/plan_input.h"
#include "core/planner/planner.h"
#include "core/validate/validator.h"
#include "ui/graph/graph_document.h"

namespace rlwb::ui {

// What the panel asks; defaults as `rlwb plan`'s.
struct PlanRequest {
  int devices = 8;
  int nodes = 0;        // 0: from the profile's devices per node
  std::string profile;  // a name of plan_profile_choices()
  int max_pp = 1;       // the workers run pp 1 until pipeline parallelism is built
  int top = 10;         // plans listed
};

struct PlanSession {
  bool open = false;  // the panel is shown
  PlanRequest request;

  // The last search (plans best first), or why it found none.
  core::planner::PlanInput input;
  core::planner::PlanSearch search;
  std::string summary;      // search_summary(): what was searched, the workload
  std::string profile;      // the profile searched with
  std::string pool_device;  // "cuda" or "cpu", as the plans are written
  int devices = 0;          // searched for
  std::string error;
  int selected = -1;  // index into search.plans; -1: none
  std::string note;   // what the last Apply did
  // The document versions these plans are for (graph_document.h's version()).
  std::set<uint64_t> versions;
};

// The profiles the panel offers: the built-in ones (A100-80G, H100-80G,
// H200), then "this-host" when `rlwb plan --calibrate` stored one.
std::vector<std::string> plan_profile_choices();
// What the panel starts with: this machine's calibrated profile when there
// is one (as `rlwb plan` does), else the first built-in.
std::string default_plan_profile();

// Searches the document's experiment with `catalog` (the validator's) and
// `vocab` (the composition root's tokenizers; null: planning is refused
// with a message). Selects the best plan.
void search_plans_for(PlanSession& session, const GraphDocument& doc, const core::MethodCatalog& catalog,
                      const core::planner::TokenizerVocab& vocab);
// The plans are for the document as it is now (see the contract).
bool plans_are_current(const PlanSession& session, const GraphDocument& doc);
// Applies the selected plan as one undo entry; false, with `error` set,
// when there is none or the document changed since the search.
bool apply_selected_plan(PlanSession& session, GraphDocument& doc);

// The panel's state for the state dump (tests, bug reports): open, request,
// profiles offered, error, note, summary, selected, current, and each plan
// as `rlwb plan --json` prints it (plan_report.h).
nlohmann::json plan_session_json(const PlanSession& session, const GraphDocument& doc);

}  // namespace rlwb::ui
