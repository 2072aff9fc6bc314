// The graph editor screen: toolbar, palette, node canvas, inspector and the
// validator's problems for one open experiment file. State is a plain struct
// owned by the app (AppState); draw_graph_editor() draws it every frame.
//
// Canvas gestures (each one undo entry):
//   left-drag a node            move the selection      click / ctrl-click  select
//   left-drag empty canvas      box select (ctrl adds)  click a link        select it
//   drag an output pin onto an input pin (or a node's "+ in" slot): link
//   drop a link on empty canvas: pick a node pre-wired to that column
//   middle- or right-drag: pan; wheel: zoom toward the cursor; F: frame all
//   Delete: remove the selection; Ctrl+Z / Ctrl+Y (Ctrl+Shift+Z): undo/redo
//   Ctrl+C / Ctrl+V: copy/paste nodes; Ctrl+A: select all; Ctrl+S: save
// The trainer phases are groups on the canvas (phase_groups.h): a frame
// around a phase's nodes (warm start, eval), edited with the gestures
// above, or a box listing a phase's settings (samples, save). Clicking a
// group's title (or a settings box) selects the phase (`inspected_phase`);
// clicking a node or empty space inside a frame makes that phase the one
// the palette adds to; clicking empty canvas outside, the step's graph.
// Links stay inside one graph. Nodes are named by canvas key
// (phase_graphs.h): `selected` holds "eval/eval_gen" for an eval node.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/graph/experiment.h"
#include "core/validate/validator.h"
#include "imgui.h"
#include "ui/graph/canvas_view.h"
#include "ui/graph/editor_catalog.h"
#include "ui/graph/graph_document.h"
#include "ui/graph/link_rules.h"
#include "ui/graph/plan_session.h"
#include "ui/graph/settings_form.h"
#include "ui/graph/validator_client.h"

namespace rlwb::ui {

// One entry of the palette: a call a new node can make.
struct PaletteEntry {
  std::string call;   // "actor.generate", "builtin.add"
  std::string group;  // "models", "rewards", "builtins"
};

// What the palette offers: every model/reward method and builtin the
// catalog knows (when there is one), else the calls the file already makes,
// for each model and reward of the file.
std::vector<PaletteEntry> palette_entries(const core::Experiment& exp, const core::MethodCatalog* catalog);

// The nodes whose id, call, columns or ports contain `text` (ignoring
// case), in node order; none for empty text. The toolbar's search.
std::vector<std::string> search_nodes(const core::Experiment& exp, const std::string& text);

// A node of `phase`'s graph ("" the step's) as JSON: {id, phase, key,
// call, in, out, in_ports, out_ports, x, y}; `key` is its canvas key
// (phase_graphs.h). What copy/paste carries and the state dump shows.
nlohmann::json node_json(const GraphDocument& doc, const core::NodeSpec& node, const std::string& phase = "");
// Copy/paste: nodes (by canvas key) as JSON text {"rlwb_nodes": [node_json...]}.
std::string copy_nodes(const GraphDocument& doc, const std::set<std::string>& keys);
// Pastes into doc as one gesture, each node into the graph it came from:
// fresh ids, outputs renamed when another node of that graph already
// writes them (inputs among the pasted nodes follow), shifted by `offset`.
// Returns the new nodes' canvas keys (empty when the text is not nodes).
std::vector<std::string> paste_nodes(GraphDocument& doc, const std::string& text, Vec2 offset);

struct GraphEditor {
  std::unique_ptr<GraphDocument> doc;  // null until a file is opened
  std::string open_path;               // the path field in the toolbar
  // --catalog FILE; null when none was given (editor_catalog.h: what then).
  std::shared_ptr<const core::MethodCatalog> catalog;
  ValidatorClient validator;

  CanvasView view;
  bool frame_requested = true;
  ImVec2 canvas_origin{0, 0}, canvas_size{0, 0};  // where the canvas was last drawn
  std::string yaml_cache;                         // document text for the validator
  uint64_t yaml_cache_version = 0;
  std::set<std::string> selected;     // canvas keys
  std::optional<Link> selected_link;  // from/to as canvas keys
  // The trainer phase last clicked (a group, or a node or empty space in a
  // frame): what the inspector shows when no node is selected, and where
  // the palette adds for a phase that takes nodes. "" for the step's graph.
  std::string inspected_phase;

  enum class Drag { none, pan, move, box, link, minimap };
  Drag drag = Drag::none;
  ImVec2 drag_origin{0, 0};               // screen position where it started
  std::map<std::string, Vec2> move_from;  // positions when a move started
  std::string link_from, link_column;     // output pin a link drag started from
  // A link dropped on empty canvas: the node picker pre-wires this column.
  std::string prewire_column, prewire_phase;
  Vec2 prewire_at;
  bool open_prewire = false;
  bool open_context = false;

  std::string palette_filter;
  std::string custom_call;
  std::string clipboard;  // also on the system clipboard
  std::string status;     // one line under the toolbar: what just happened or why not

  // Inspector fields being edited (so typing is not applied per key).
  std::string inspected;  // node id the buffers belong to
  uint64_t inspected_version = 0;
  std::string edit_id, edit_call, edit_in, edit_out, edit_args;
  // The experiment's forms (experiment_panel.cpp): the field being typed
  // into, the filter over every setting's path, names being typed into a
  // pool's, model's or reward's name field ("models/actor" -> text), and a
  // resource just added, whose entry opens on the next frame.
  SettingsFormState form;
  std::string settings_filter;
  std::map<std::string, std::string> resource_names;
  std::string open_resource;

  // For tests and screenshots: what the validator said for the current version.
  std::vector<core::GraphIssue> issues;
  uint64_t issues_version = 0;
  bool wants_run = false;  // the toolbar's Run button was pressed (the app switches to Launch)

  // The run whose experiment this document holds ("Open in editor" on a
  // run); 0 for a file opened by path.
  int64_t origin_run = 0;
  std::string templates_dir;  // New...: each *.yaml here is a template (WorkbenchOptions::templates)
  // The toolbar's search: Enter selects the next match and centres the
  // canvas on it (`centre_on`, done by the canvas, which knows its size).
  std::string search;
  size_t search_next = 0;
  std::string centre_on;
  // Waiting for the "unsaved changes" dialog (unsaved_guard.cpp): a file
  // to open (with its origin run), or quitting. The dialog is up while
  // either is set.
  std::optional<std::pair<std::string, int64_t>> pending_open;
  bool pending_quit = false;
  bool quit_now = false;  // the user chose to quit: the frame loop ends

  // The Plan panel (plan_panel.h), and the tokenizers it reads model
  // shapes through (WorkbenchOptions::tokenizer_vocab; null: it says so).
  PlanSession plan;
  core::planner::TokenizerVocab tokenizer_vocab;
};

// Opens `path` into the editor (a file that does not load shows its errors).
void open_graph(GraphEditor& editor, const std::string& path);
// What the document is validated against: --catalog or this build's
// catalog, else the one the open file implies (editor_catalog.h).
std::shared_ptr<const core::MethodCatalog> validation_catalog(const GraphEditor& editor);
void draw_graph_editor(GraphEditor& editor);

// Opens `path`, or, when the open document has unsaved edits, asks first
// (Save, Discard, Cancel) and opens it once the user chose Save or Discard.
void request_open(GraphEditor& editor, const std::string& path, int64_t origin_run = 0);
// The window asks to close: true when nothing is unsaved; otherwise the
// dialog asks and false is returned (quit_now is set once the user agrees).
bool request_quit(GraphEditor& editor);
// The dialog, when something waits for it (call every frame, on any screen).
void draw_unsaved_dialog(GraphEditor& editor);

// The header colour of the index-th pool in name order (the canvas's), and
// of a device set in the Plan panel, which is that pool once applied.
ImU32 pool_color(size_t index);

// Link/pin geometry on the canvas, shared by drawing and hit tests.
struct NodeBox {
  std::string id;                                         // canvas key (phase_graphs.h)
  std::string phase;                                      // "" for the step's graph
  ImVec2 min, max;                                        // screen
  float header = 0;                                       // header height (screen)
  bool task = false;                                      // the task pseudo node
  std::vector<std::pair<std::string, ImVec2>> ins, outs;  // pin name (column) -> screen centre
  // What each pin shows: its column, or "port: column" where the node binds
  // the column to a port of another name (`in: {port: column}`).
  std::vector<std::string> in_labels, out_labels;
  // The row each pin is drawn in (pin_order.h): ins[i] sits in row in_rows[i].
  std::vector<size_t> in_rows, out_rows;
  ImVec2 add_in;  // the "+ in" slot
};

}  // namespace rlwb::ui
